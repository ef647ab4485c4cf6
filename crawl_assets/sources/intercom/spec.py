"""Intercom: conversations of a workspace through the REST API; each part is a record."""

from crawl_assets.core.options import AtLeast, Clamped, SourceOptions
from crawl_assets.core.catalog import FormatSpec, PullSpec, ReleaseTerms, SourceSpec, WebhookSpec


class IntercomOptions(SourceOptions):
    """Options of a ``workspace`` source (an empty value or 0 means the default)."""

    per_page: Clamped(1, 150, 50) = 50  # conversations per search page
    conversations_per_batch: AtLeast(1, 20) = 20  # conversations per raw batch (and checkpoint)
    overlap_seconds: AtLeast(0, 60) = 60  # how far before the cursor each search starts again


SPEC = SourceSpec(
    platform="intercom",
    description="Intercom conversations of a workspace (REST API, incremental by updated_at); parts as records.",
    raw_asset="intercom_conversations_raw",
    raw_description="Raw Intercom conversations of one workspace, each as GET /conversations/{id} answered "
    "(with its parts), wrapped with the workspace id; stored exactly as received.",
    kinds=("workspace",),
    formats=(FormatSpec("intercom", "crawl_assets.sources.intercom.normalize:normalize_intercom",
                        "Intercom conversations in crawl envelopes", numbered_lines=True, envelope_field="workspace"),),
    export_formats=("intercom",),
    identifier_hints={"workspace": "<workspace id>"},
    persons="crawl_assets.sources.intercom.normalize:PERSONS",
    options_model=IntercomOptions,
    pull=PullSpec(sync="crawl_assets.sources.intercom.sync:sync_workspace", raw_format="intercom", secret="ACCESS_TOKEN"),
    resource="crawl_assets.sources.intercom.resource:IntercomResource.from_env",
    # X-Hub-Signature: sha1=<hex HMAC-SHA1 of the body, key = the app's client secret>; the notification id and
    # created_at are inside the signed body (the same id on every retry of one notification)
    webhook=WebhookSpec("x-hub-signature", "sha1=", "sha1", signed_id_field="id", signed_time_field="created_at"),
    release_terms=ReleaseTerms(
        ids_only=False,
        note=(
            "Conversations with the publisher's own customers: personal data under the publisher's privacy "
            "notice; share only with a legal basis (consider --pseudonymize)."
        ),
    ),
)
