"""The world the API tests read was built by the real pipeline, for three tenants."""


def test_every_tenant_has_records_indexed_by_the_pipeline(world) -> None:
    assert world.indexed["demo"] > 600, world.indexed  # demo samples (~480) + generated (~430)
    assert world.indexed["rival"] == 20 and world.indexed["demo-x"] == 20
