"""Web pages (namespace ``stash``): the index, the submit form, an item's status."""

from django.urls import path

from stash.web import appeals, views

app_name = "stash"

urlpatterns = [
    path("", views.index, name="index"),
    path("s/<slug:slug>/submit/", views.submit, name="submit"),
    path("c/<uuid:pk>/", views.content, name="content"),
    path("c/<uuid:pk>/appeal/", appeals.appeal, name="content-appeal"),
    path("c/<uuid:pk>/status/", views.content_status, name="content-status"),
]
