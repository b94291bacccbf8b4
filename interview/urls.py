"""URL configuration: HTML pages, the JSON API under /api/v1/, the admin."""

from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from interview import views

admin.site.site_header = "Serving Interview Lab authoring"
admin.site.site_title = "Serving Interview Lab admin"
admin.site.index_title = "Content and learners"

# JSON errors under /api/, the HTML error pages elsewhere.
handler400 = "interview.api_errors.bad_request"
handler404 = "interview.api_errors.not_found"
handler500 = "interview.api_errors.server_error"

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("calculators/", include("calculators.urls")),
    path("simulator/", include("calculators.simulator_urls")),
    path("api/v1/calculators/", include("calculators.api_urls")),
    path("api/v1/simulator/", include("calculators.simulator_api_urls")),
    path("api/v1/", include("lessons.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI sets inline styles on its own elements; scripts stay 'self' only.
    path(
        "api/docs/",
        csp_update({"style-src": ["'unsafe-inline'"]})(SpectacularSwaggerSplitView.as_view(url_name="schema")),
        name="api-docs",
    ),
    path("accounts/", include("interview.accounts.urls")),
    path("", include("lessons.urls")),
]
