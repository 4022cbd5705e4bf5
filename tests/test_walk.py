"""Which files are read: only regular files inside the directory given, and every failure to read is an error.

Argo CD runs the plugin in the app's directory of a repository anyone with commit rights shapes:
a symlink to `/etc/passwd`, to a secret elsewhere in the checkout, to `/dev/zero` or to a FIFO
must be refused (as Argo CD refuses out-of-bounds symlinks), never read into a rendered manifest.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, VALID, run_cli

REPLICA = (VALID[0] / "replica.yaml").read_text()
SECRET = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: leaked\nstringData:\n  token: do-not-render-me\n"


@pytest.fixture
def app(tmp_path):  # type: ignore[no-untyped-def]
    """An app directory with one valid replica, beside a file outside it that must never be read."""
    (tmp_path / "outside.yaml").write_text(SECRET)
    app = tmp_path / "app"
    app.mkdir()
    (app / "replica.yaml").write_text(REPLICA)
    return app


def render(app, *paths: str):  # type: ignore[no-untyped-def]
    result = run_cli("render", *(paths or (".",)), cwd=app)
    assert "do-not-render-me" not in result.stdout + result.stderr
    return result


def refused(app, *paths: str) -> list[str]:  # type: ignore[no-untyped-def]
    result = render(app, *paths)
    assert (result.code, result.stdout) == (1, "")
    return result.stderr.splitlines()


def test_a_symlink_inside_the_directory_is_read(app):  # type: ignore[no-untyped-def]
    (app / "sub").mkdir()
    (app / "replica.yaml").rename(app / "sub" / "replica.txt")  # not *.yaml: read only through the link
    (app / "link.yaml").symlink_to("sub/replica.txt")
    result = render(app)
    assert result.code == 0 and "kind: LeaderWorkerSet" in result.stdout


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("../outside.yaml", id="dot-dot"),
        pytest.param("/etc/passwd", id="etc-passwd"),
        pytest.param("/dev/zero", id="dev-zero"),
        pytest.param("/proc/self/environ", id="proc-environ"),
    ],
)
def test_a_symlink_that_leads_outside_is_refused(app, target):  # type: ignore[no-untyped-def]
    (app / "evil.yaml").symlink_to(target)
    real = os.path.realpath(app / "evil.yaml")
    assert refused(app) == [f"evil.yaml:1:1: .: symlink leads outside .: refusing to read {real}"]


def test_a_chain_of_symlinks_is_judged_by_where_it_ends(app):  # type: ignore[no-untyped-def]
    (app / "hop.yaml").symlink_to("../outside.yaml")
    (app / "sub").mkdir()
    (app / "sub" / "evil.yaml").symlink_to("../hop.yaml")
    lines = refused(app)
    assert lines == [
        f"hop.yaml:1:1: .: symlink leads outside .: refusing to read {app.parent / 'outside.yaml'}",
        f"sub/evil.yaml:1:1: .: symlink leads outside .: refusing to read {app.parent / 'outside.yaml'}",
    ]


def test_a_symlink_out_and_back_in_is_inside(app):  # type: ignore[no-untyped-def]
    (app / "replica.yaml").rename(app / "replica.txt")
    (app / "back.yaml").symlink_to(f"../{app.name}/replica.txt")
    assert render(app).code == 0


def test_symlink_loops_and_dangling_symlinks_are_errors(app):  # type: ignore[no-untyped-def]
    (app / "a.yaml").symlink_to("b.yaml")
    (app / "b.yaml").symlink_to("a.yaml")
    (app / "dangling.yaml").symlink_to("missing.yaml")
    assert refused(app) == [
        "a.yaml:1:1: .: cannot read: too many levels of symbolic links",
        "b.yaml:1:1: .: cannot read: too many levels of symbolic links",
        "dangling.yaml:1:1: .: cannot read: no such file or directory",
    ]


def test_a_fifo_is_refused_and_never_opened(app):  # type: ignore[no-untyped-def]
    """Opening a FIFO blocks until a writer comes: this would hang, not fail, if it were opened."""
    os.mkfifo(app / "pipe.yaml")
    done = subprocess.run([sys.executable, str(ROOT / "plugin.py"), "render", "."], cwd=app, capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == "pipe.yaml:1:1: .: not a regular file (a device, FIFO or socket): refusing to read it\n"
    given = subprocess.run([sys.executable, str(ROOT / "plugin.py"), "render", "pipe.yaml"], cwd=app, capture_output=True, timeout=60)
    assert given.returncode == 1 and b"not a regular file" in given.stderr


def test_a_device_given_on_the_command_line_is_refused(app):  # type: ignore[no-untyped-def]
    assert refused(app, "/dev/zero") == ["/dev/zero:1:1: .: not a regular file (a device, FIFO or socket): refusing to read it"]


def test_a_file_swapped_for_a_fifo_after_the_walk_is_refused_when_opened(app):  # type: ignore[no-untyped-def]
    """The check is made again on the open file: no window between looking and reading."""
    from modelplane_render.errors import InputError
    from modelplane_render.walk import read_file

    os.mkfifo(app / "late.yaml")
    with pytest.raises(InputError) as caught:
        read_file("late.yaml", str(app / "late.yaml"))
    assert "not a regular file" in str(caught.value)


def test_a_symlinked_directory_leading_outside_is_refused_not_skipped(app, tmp_path):  # type: ignore[no-untyped-def]
    """As Argo CD refuses links out of the repository: never entered, and never a silent skip either."""
    outside_dir = tmp_path / "elsewhere"
    outside_dir.mkdir()
    (outside_dir / "secret.yaml").write_text(SECRET)
    (app / "linked").symlink_to(outside_dir)
    assert refused(app) == [
        f"linked:1:1: .: symlink to a directory leads outside . (to {outside_dir}): refusing it, as Argo CD refuses links that leave the repository"
    ]


def test_a_symlinked_directory_inside_with_yaml_is_refused_naming_its_target(app):  # type: ignore[no-untyped-def]
    """Not followed (as kubectl's and Argo CD's walks), and skipping it would drop the replicas behind it."""
    (app / "teams" / "chat").mkdir(parents=True)
    (app / "current").symlink_to("teams/chat")
    (app / "teams" / "chat" / "config.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ml}\n")
    (app / "loop").symlink_to(".")
    assert refused(app) == [
        "current:1:1: .: symlink to a directory is not followed, and its target holds YAML: give teams/chat as a path instead of the link",
        "loop:1:1: .: symlink to a directory is not followed, and its target holds YAML: give . as a path instead of the link",
    ]


def test_a_symlinked_directory_inside_without_yaml_loses_nothing(app):  # type: ignore[no-untyped-def]
    (app / "docs").mkdir()
    (app / "docs" / "README.md").write_text("no manifests\n")
    (app / "manual").symlink_to("docs")
    (app / ".hidden-link").symlink_to("/etc")  # hidden, as every hidden name: not walked
    result = render(app)
    assert (result.code, result.stderr) == (0, "")


def test_dot_dot_in_a_path_given_is_that_path(app):  # type: ignore[no-untyped-def]
    """What the user names is read (kubectl -f does the same); only what a walk finds is confined."""
    assert render(app, f"../{app.name}").code == 0


def test_a_directory_too_deep_for_the_path_limit_is_an_error_not_skipped(app):  # type: ignore[no-untyped-def]
    """A real failure to list a directory, even as root: its path is longer than PATH_MAX (4096)."""
    fd = os.open(app, os.O_RDONLY)
    try:
        for _ in range(18):  # 18 * 251 bytes > 4096
            os.mkdir("d" * 250, dir_fd=fd)
            inner = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with os.fdopen(os.open("hidden.yaml", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as handle:
            handle.write(REPLICA)
    finally:
        os.close(fd)
    lines = refused(app)
    assert len(lines) == 1 and lines[0].endswith(": .: cannot read directory: file name too long"), lines
    assert lines[0].startswith("d" * 200 + "...("), lines  # a 4 KB name, shown by its ends
    shutil.rmtree(app / ("d" * 250), ignore_errors=True)


def _as_unprivileged() -> list[str]:
    """A command prefix that runs without the power to read what permissions forbid.

    Tests run as root in CI, and root reads a chmod 000 file anyway; dropping the capabilities
    that let it (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) makes the permissions real.
    """
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if not setpriv:
        pytest.skip("running as root without util-linux's setpriv: root can read a chmod 000 file, so the test would prove nothing")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]


@pytest.mark.parametrize("what", ["file", "directory"])
def test_an_unreadable_file_or_directory_is_an_error_not_a_crash_or_a_skip(app, what):  # type: ignore[no-untyped-def]
    if what == "file":
        victim = app / "locked.yaml"
        victim.write_text(REPLICA)
        expected = "locked.yaml:1:1: .: cannot read: permission denied"
    else:
        victim = app / "locked"
        victim.mkdir()
        (victim / "replica.yaml").write_text(REPLICA)
        expected = "locked:1:1: .: cannot read directory: permission denied"
    victim.chmod(0)
    try:
        done = subprocess.run(
            [*_as_unprivileged(), sys.executable, str(ROOT / "plugin.py"), "render", "."], cwd=app, capture_output=True, timeout=60
        )
    finally:
        victim.chmod(0o755)
    assert (done.returncode, done.stdout) == (1, b""), done.stderr
    assert done.stderr.decode() == expected + "\n"
