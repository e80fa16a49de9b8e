"""The container recipe (no container engine runs here, so it is checked statically): it installs
the pinned requirements and copies every project module the dashboard imports."""

import ast
import re

from tests.conftest import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text()


def copied() -> set[str]:
    names = set()
    for line in DOCKERFILE.splitlines():
        if line.startswith("COPY "):
            names.update(p.rstrip("/") for p in line.split()[1:-1])
    return names


def project_imports(path) -> set[str]:
    tops = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            tops.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            tops.add(node.module.split(".")[0])
    return {t for t in tops if (ROOT / t).is_dir() or (ROOT / f"{t}.py").is_file()}


def test_the_image_installs_the_pinned_requirements():
    assert "pip install --no-cache-dir -r requirements.txt" in DOCKERFILE
    assert "requirements.txt" in copied()


def test_the_image_holds_every_module_the_dashboard_imports():
    files = [ROOT / "app.py"] + [p for d in ("views", "ui", "sdc_core")
                                  for p in (ROOT / d).rglob("*.py")]
    imported = set().union(*(project_imports(f) for f in files))
    assert imported >= {"sdc_core", "ui"}
    assert imported | {"app.py", "views", ".streamlit"} <= copied()


def test_the_image_runs_unprivileged_and_listens_inside_the_container():
    assert re.search(r"^USER (?!root)\w+", DOCKERFILE, re.M)
    assert '"--server.address", "0.0.0.0"' in DOCKERFILE
    assert "/_stcore/health" in DOCKERFILE


def test_the_server_user_cannot_write_the_application():
    """Defence in depth (issue 38): the code is copied as root, made read-only, and the server
    runs as another user, so a server process can change none of it."""
    lines = DOCKERFILE.splitlines()
    user = next(i for i, line in enumerate(lines) if line.startswith("USER "))
    assert "RUN chmod -R a-w /app" in lines[:user]
    assert all(i < user for i, line in enumerate(lines) if line.startswith("COPY "))
    assert "--chown" not in DOCKERFILE and "chown " not in DOCKERFILE
