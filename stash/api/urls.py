"""API routes, under /api/ (namespace ``api``)."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from stash.api import (
    appeal_views,
    callback_views,
    failure_views,
    pipeline_views,
    review_views,
    shadow_views,
    statement_views,
    views,
)

app_name = "api"

router = SimpleRouter()
router.register("contents", views.ContentViewSet, basename="content")
router.register("stashes", views.StashViewSet, basename="stash")
router.register(r"stashes/(?P<stash_slug>[-a-zA-Z0-9_]+)/hooks", views.HookConfigViewSet, basename="hookconfig")
router.register(r"stashes/(?P<stash_slug>[-a-zA-Z0-9_]+)/versions", pipeline_views.VersionViewSet, basename="version")
router.register(r"stashes/(?P<stash_slug>[-a-zA-Z0-9_]+)/examples", pipeline_views.ExampleViewSet, basename="example")
router.register(r"stashes/(?P<stash_slug>[-a-zA-Z0-9_]+)/shadows", shadow_views.ShadowViewSet, basename="shadow")
router.register("hooks", views.HookTypeViewSet, basename="hook")
router.register("statements", statement_views.StatementViewSet, basename="statement")
router.register("appeals", appeal_views.AppealViewSet, basename="appeal")

urlpatterns = [
    path("auth/token/", views.TokenView.as_view(), name="token"),
    path("callbacks/<str:token>/", callback_views.CallbackView.as_view(), name="callback"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path(
        "docs/", SpectacularSwaggerView.as_view(url_name="api:schema", template_name="stash/api_docs.html"), name="docs"
    ),
    path("stashes/<slug:stash_slug>/pipeline/", pipeline_views.PipelineView.as_view(), name="pipeline"),
    path("contents/<uuid:pk>/appeal/", appeal_views.ContentAppealView.as_view(), name="content-appeal"),
    path("contents/<uuid:pk>/review/", review_views.ReviewView.as_view(), name="content-review"),
    path("contents/<uuid:pk>/claim/", review_views.ClaimView.as_view(), name="content-claim"),
    path("contents/<uuid:pk>/release/", review_views.ReleaseView.as_view(), name="content-release"),
    path("review/", review_views.ReviewQueueView.as_view(), name="review-queue"),
    path("failures/", failure_views.FailureListView.as_view(), name="failures"),
    path("failures/<slug:key>/", failure_views.FailureGroupView.as_view(), name="failure-group"),
    path("failures/<slug:key>/redrive/", failure_views.RedriveView.as_view(), name="failure-redrive"),
    *router.urls,
]
