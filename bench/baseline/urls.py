"""URLs for `make bench`: the project's, plus the hand-written ``POST /bench/items/``."""

from django.urls import include, path

from hooksite.urls import handler400, handler404, handler500  # noqa: F401 - the project's error pages

from .views import ItemCreateView

urlpatterns = [path("bench/items/", ItemCreateView.as_view(), name="bench-items"), path("", include("hooksite.urls"))]
