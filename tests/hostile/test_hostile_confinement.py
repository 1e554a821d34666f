"""Class 1 and 2: a bundle can never make us read outside it, follow a link, or open a special
file. A secret planted outside the bundle must appear in no output: terminal, JSON, database."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading

import pytest
from hostile_helpers import SECRET, SECRET_LINE, cli, plant_secret, write_bundle

from slurm_attr.analyze import analyze_bundle
from slurm_attr.collect.confine import ConfinementError, Root
from slurm_attr.scope.static import BundleError, expand_nodes


def _assert_secret_nowhere(run, db):
    assert SECRET not in run.stdout and SECRET not in run.stderr
    if db.exists():
        dump = "\n".join(sqlite3.connect(db).iterdump())
        assert SECRET not in dump


@pytest.mark.parametrize("nodes", ["gpu-01,../../../etc", "/etc", "gpu-01,..", "gpu-[01-02],a/b"])
def test_node_names_that_are_paths_are_refused(tmp_path, nodes):
    secret = plant_secret(tmp_path / "etc")
    bundle = write_bundle(tmp_path / "b" / "bundle", {"app/out.log": "hello\n"}, nodes=nodes)
    db = tmp_path / "attr.db"
    run = cli("analyze", str(bundle), "--save", "--format", "json", db=db)
    assert run.rc == 2
    assert "nodes" in run.stderr and "Traceback" not in run.stderr
    _assert_secret_nowhere(run, db)
    assert secret.exists()


def test_directory_links_out_of_the_bundle_are_not_followed(tmp_path):
    secret = plant_secret(tmp_path / "outside")
    bundle = write_bundle(tmp_path / "bundle", {"nodes/gpu-01/syslog": "Nov 20 10:00:00 gpu-01 x: hi\n"})
    (bundle / "app").symlink_to(secret, target_is_directory=True)
    (bundle / "nodes" / "gpu-02").symlink_to(secret, target_is_directory=True)
    (bundle / "controller").symlink_to(secret, target_is_directory=True)
    (bundle / "nodes" / "gpu-01" / "kern.log").symlink_to(secret / "syslog")
    db = tmp_path / "attr.db"
    run = cli("analyze", str(bundle), "--save", "--format", "json", db=db)
    assert run.rc == 0, run.stderr
    _assert_secret_nowhere(run, db)
    d = json.loads(run.stdout)
    cov = {(c["collector"], c["node"]): c for c in d["coverage"]}
    assert cov[("job_output", None)]["status"] == "refused"
    assert cov[("node_syslog", "gpu-02")]["status"] == "refused"
    assert "symbolic link" in cov[("node_syslog", "gpu-02")]["reason"]
    assert cov[("node_syslog", "gpu-01")]["status"] == "ok"  # its real file is read; the link is a note
    assert any("kern.log: a symbolic link" in n for n in cov[("node_syslog", "gpu-01")]["notes"])


@pytest.mark.parametrize("sacct", ["/etc/passwd", "../outside/sacct.json", "link.json"])
def test_sacct_field_cannot_name_a_file_outside(tmp_path, sacct):
    plant_secret(tmp_path / "outside")
    bundle = write_bundle(tmp_path / "bundle", sacct=sacct)
    (bundle / "link.json").symlink_to(tmp_path / "outside" / "sacct.json")
    with pytest.raises(BundleError) as err:
        analyze_bundle(bundle)
    assert SECRET not in str(err.value)


def test_workload_json_as_a_link_is_refused(tmp_path):
    plant_secret(tmp_path / "outside")
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "workload.json").symlink_to(tmp_path / "outside" / "workload.json")
    with pytest.raises(BundleError, match="symbolic link"):
        analyze_bundle(bundle)


def _with_timeout(fn, seconds=10):
    """Run fn in a thread; a hang fails the test instead of blocking the suite."""
    box = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "hung on a special file"
    return box


@pytest.mark.parametrize("which", ["workload.json", "sacct.json"])
def test_fifo_in_place_of_json_is_refused_without_hanging(tmp_path, which):
    bundle = write_bundle(tmp_path / "bundle", sacct="sacct.json")
    (bundle / which).unlink(missing_ok=True)
    os.mkfifo(bundle / which)
    box = _with_timeout(lambda: analyze_bundle(bundle))
    assert isinstance(box.get("error"), BundleError)
    assert "not a regular file" in str(box["error"])


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_device_node_in_place_of_workload_is_refused(tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    os.mknod(bundle / "workload.json", stat.S_IFCHR | 0o644, os.makedev(1, 5))  # /dev/zero
    box = _with_timeout(lambda: analyze_bundle(bundle))
    assert isinstance(box.get("error"), BundleError)
    assert "not a regular file" in str(box["error"])


def test_fifo_and_links_as_logs_are_skipped_and_noted(tmp_path):
    bundle = write_bundle(tmp_path / "bundle", {"nodes/gpu-01/syslog": SECRET_LINE.replace(SECRET, "x")})
    os.mkfifo(bundle / "nodes" / "gpu-01" / "dmesg")
    (bundle / "nodes" / "gpu-01" / "zero").symlink_to("/dev/zero")
    box = _with_timeout(lambda: analyze_bundle(bundle))
    d = box["value"]
    notes = next(c for c in d["coverage"] if c["node"] == "gpu-01")["notes"]
    assert any("dmesg: not a regular file" in n for n in notes)
    assert any("zero: a symbolic link" in n for n in notes)
    assert d["sub_domain"] == "gpu"  # the real syslog still counts


def test_root_refuses_escapes_by_construction(tmp_path):
    plant_secret(tmp_path / "outside")
    inside = tmp_path / "root"
    (inside / "d").mkdir(parents=True)
    (inside / "d" / "up").symlink_to(tmp_path / "outside", target_is_directory=True)
    with Root(inside) as root:
        for rel in ("../outside/syslog", "/etc/passwd", "d/up/syslog", "d/../../outside/syslog"):
            with pytest.raises(ConfinementError):
                root.open_fd(rel)
        listing = root.files_under("d")
        assert listing.files == [] and listing.skipped == ["d/up: a symbolic link, not followed"]


def test_a_huge_hostlist_is_refused_before_it_is_expanded():
    with pytest.raises(ValueError, match="more than"):
        expand_nodes("gpu-[1-99999999999]")
    with pytest.raises(ValueError, match="more than"):
        expand_nodes("a[1-1000]b[1-1000]")
    assert expand_nodes("gpu-[001-003],cpu7") == ["gpu-001", "gpu-002", "gpu-003", "cpu7"]
