"""Debian's nginx as the test user, in front of replicas on 127.0.0.1: the shipped deploy/nginx.conf with its ports
swapped for the test's, under a temp prefix (pid file, logs, temp dirs), `daemon off;`, a subprocess the test stops.

`NGINX` is the binary or None; `deploy_site(ports, listen)` is deploy/nginx.conf for those ports; `Nginx(site, dir)`
runs it (a context manager, ready once /healthz answers through it)."""

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from .servers import REPO, stop_process, wait_until_ok

NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)
DEPLOY_CONF = REPO / "deploy" / "nginx.conf"
SHIPPED_REPLICAS = ("127.0.0.1:8101", "127.0.0.1:8102", "127.0.0.1:8103")
SHIPPED_LISTEN = "listen 127.0.0.1:8100;"


def deploy_site(replica_ports: list[int], listen_port: int) -> str:
    """deploy/nginx.conf with the replicas at `replica_ports` and nginx at 127.0.0.1:`listen_port`: nothing else of
    the shipped file changes, so the test runs what users copy."""
    text = DEPLOY_CONF.read_text()
    assert len(replica_ports) == len(SHIPPED_REPLICAS) and SHIPPED_LISTEN in text
    for shipped, port in zip(SHIPPED_REPLICAS, replica_ports, strict=True):
        assert shipped in text, f"{shipped} is no longer in {DEPLOY_CONF}"
        text = text.replace(f"{shipped};", f"127.0.0.1:{port};")
    return text.replace(SHIPPED_LISTEN, f"listen 127.0.0.1:{listen_port};")


MAIN = """daemon off;
{user}worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log info;
events {{ worker_connections 256; }}
http {{
    log_format replicas '$request_method $uri $status session=$http_mcp_session_id upstream=$upstream_addr';
    access_log {dir}/access.log replicas;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    include {dir}/toolwire.conf;
}}
"""


class Nginx:
    """nginx serving `site` (an http-context config) from `directory`, on the port named in its `listen`."""

    def __init__(self, site: str, directory: Path, port: int) -> None:
        self.dir, self.port = directory, port
        self.base = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "toolwire.conf").write_text(site)
        user = "user root;\n" if os.geteuid() == 0 else ""  # as root, workers would else run as nobody: no temp dir
        (directory / "nginx.conf").write_text(MAIN.format(dir=directory, user=user))

    def __enter__(self) -> "Nginx":
        assert NGINX is not None
        argv = [NGINX, "-p", str(self.dir), "-c", str(self.dir / "nginx.conf"), "-e", str(self.dir / "error.log")]
        stderr = (self.dir / "stderr.log").open("wb")
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr)
        stderr.close()
        try:
            wait_until_ok(self.base + "/healthz", self.proc, self.dir / "error.log", 20, "nginx")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None:
            stop_process(self.proc)  # SIGTERM: nginx's fast shutdown

    def access_log(self) -> str:
        return (self.dir / "access.log").read_text(errors="replace")
