"""Project URLs: health and metrics, the admin, the API, login/logout and the web pages."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from stash.ops.health import healthz, readyz
from stash.ops.metrics_views import metrics

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/", include("stash.api.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("stash.urls")),
]

# JSON under /api/, Django's pages elsewhere.
handler400 = "stash.api.exceptions.bad_request"
handler404 = "stash.api.exceptions.page_not_found"
handler500 = "stash.api.exceptions.server_error"
