"""Google Play reviews of a tenant's own apps (Developer API reviews.list) and Play Console CSV exports."""
