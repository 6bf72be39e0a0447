"""The REST API shaped like Flink's and the dashboard page, served by the driver while a
job runs (``rest.port``): ``server.py`` (HTTP, routes, static files), ``job_view.py``
(what the driver tells about one running job), ``flink_json.py`` (the bodies, with
Flink's field names), ``static/`` (the page: plain HTML, SVG and JavaScript)."""
