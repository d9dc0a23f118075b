"""/api/schema/ (OpenAPI 3) and /api/docs/ (Swagger UI, served from our own static files)."""

import pytest
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db

PATHS = [
    "/api/auth/token/",
    "/api/callbacks/{token}/",
    "/api/contents/",
    "/api/contents/{id}/",
    "/api/contents/{id}/reprocess/",
    "/api/contents/bulk/",
    "/api/hooks/",
    "/api/stashes/",
    "/api/stashes/{slug}/",
    "/api/stashes/{slug}/queue/",
    "/api/stashes/{slug}/simulate/",
    "/api/stashes/{stash_slug}/hooks/",
    "/api/stashes/{stash_slug}/hooks/{id}/",
    "/api/stashes/{stash_slug}/hooks/reorder/",
    "/api/stashes/{stash_slug}/pipeline/",
    "/api/stashes/{stash_slug}/versions/",
    "/api/stashes/{stash_slug}/versions/{number}/",
    "/api/stashes/{stash_slug}/versions/{number}/restore/",
    "/api/stashes/{stash_slug}/versions/diff/",
    "/api/stashes/{stash_slug}/examples/",
    "/api/stashes/{stash_slug}/examples/{id}/",
    "/api/stashes/{stash_slug}/examples/run/",
    "/api/stashes/{stash_slug}/shadows/",
    "/api/stashes/{stash_slug}/shadows/{id}/",
    "/api/stashes/{stash_slug}/shadows/{id}/promote/",
    "/api/stashes/{stash_slug}/shadows/{id}/stop/",
    "/api/contents/{id}/example/",
    "/api/statements/",
    "/api/contents/{id}/appeal/",
    "/api/appeals/",
    "/api/appeals/{id}/decide/",
    "/api/contents/{id}/review/",
    "/api/contents/{id}/claim/",
    "/api/contents/{id}/release/",
    "/api/review/",
    "/api/failures/",
    "/api/failures/{key}/",
    "/api/failures/{key}/redrive/",
]


def test_the_schema_is_openapi_3_and_describes_every_endpoint_and_its_errors(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert sorted(schema["paths"]) == sorted(PATHS)
    submit = schema["paths"]["/api/contents/"]["post"]
    assert {"201", "200", "400", "401", "403", "409", "413", "415", "429"} <= set(submit["responses"])
    assert any(p["name"] == "Idempotency-Key" and p["in"] == "header" for p in submit["parameters"])
    assert {"tokenAuth", "cookieAuth"} <= set(schema["components"]["securitySchemes"])


def test_the_schema_offers_only_registered_hook_names(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    hook_enum = schema["components"]["schemas"]["HookConfigRequest"]["properties"]["hook"]
    assert "os.system" not in str(hook_enum)
    assert "require_fields" in str(schema["components"]["schemas"])


def test_the_docs_page_serves_swagger_ui_from_local_static_files(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<div id="swagger-ui"></div>' in html
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert "cdn." not in html and "https://" not in html
    for name in ("swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css", "favicon-32x32.png"):
        assert finders.find(f"drf_spectacular_sidecar/swagger-ui-dist/{name}"), name


def schema_of(client):
    return client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()


def test_the_schema_says_a_payload_change_needs_the_payload(client):
    schema = schema_of(client)
    body = schema["paths"]["/api/contents/{id}/"]["patch"]["requestBody"]
    component = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert body["required"] is True
    assert schema["components"]["schemas"][component]["required"] == ["payload"]


@pytest.mark.parametrize("component", ["HookConfigRequest", "PatchedHookConfigRequest"])
def test_the_schema_says_hook_params_are_an_object_never_null(client, component):
    params = schema_of(client)["components"]["schemas"][component]["properties"]["params"]
    assert params["type"] == "object"
    assert not params.get("nullable")


def test_the_schema_says_filters_are_never_blank(client):
    parameters = {p["name"]: p for p in schema_of(client)["paths"]["/api/contents/"]["get"]["parameters"]}
    assert parameters["stash"]["schema"]["minLength"] == 1
    assert parameters["status"]["schema"]["minLength"] == 1


def test_the_schema_documents_verbose_simulation(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    operation = schema["paths"]["/api/stashes/{slug}/simulate/"]["post"]
    [verbose] = [p for p in operation["parameters"] if p["name"] == "verbose"]
    assert (verbose["in"], verbose["schema"]["type"]) == ("query", "boolean")
    components = schema["components"]["schemas"]
    request = components[operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]]
    assert {"payload", "content_id", "verbose"} <= set(request["properties"])
    step = components["SimulatedStep"]["properties"]
    assert {"stopped", "after_stop", "payload"} <= set(step)
    assert "verbose" in components["Simulation"]["properties"]


def test_the_schema_documents_pipeline_documents_and_their_refusals(client):
    schema = schema_of(client)
    put = schema["paths"]["/api/stashes/{stash_slug}/pipeline/"]["put"]
    assert {"200", "400", "403", "404", "409"} <= set(put["responses"])
    assert any(p["name"] == "dry_run" and p["in"] == "query" for p in put["parameters"])
    components = schema["components"]["schemas"]
    document = components[put["requestBody"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]]
    assert document["required"] == ["format", "format_version", "hooks"]
    refused = put["responses"]["409"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
    assert set(components[refused]["properties"]) == {"detail", "examples"}
    plan = put["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
    assert set(components[plan]["properties"]) == {"stash", "created", "changes", "applied", "version", "examples"}
    diff = schema["paths"]["/api/stashes/{stash_slug}/versions/diff/"]["get"]
    assert {p["name"] for p in diff["parameters"] if p["in"] == "query"} == {"from", "to"}
