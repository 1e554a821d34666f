"""Property tests: hostile input never crashes the engine, and problems land in `errors`."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slurm_attr.analyze import analyze_bundle

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
PREFIXES = st.sampled_from([b"", b"NVRM: Xid (PCI:0000:18:00): ", b"[rank1]: Traceback (most recent call last):\n",
                            b"gpu-01:1:2 [0] NCCL WARN ", b"Nov 20 10:30:00 gpu-02 kernel: ",
                            b"oom-kill:constraint=", b"srun: error: ", b"*** JOB 4242 ON gpu-01 CANCELLED AT "])


@SETTINGS
@given(prefix=PREFIXES, noise=st.binary(max_size=3000))
def test_random_bytes_never_crash(make_bundle, prefix, noise):
    bundle = make_bundle({"app/out.log": prefix + noise, "nodes/gpu-02/syslog": prefix + noise,
                          "controller/slurmctld.log": noise + prefix})
    d = analyze_bundle(bundle)
    assert d["sub_domain"]
    if b"\x00" in noise:
        assert any("NUL" in e["message"] for e in d["errors"])


@SETTINGS
@given(text=st.text(max_size=2000))
def test_random_text_never_crashes(make_bundle, text):
    d = analyze_bundle(make_bundle({"app/out.log": text, "nodes/gpu-01/kern.log": text}))
    assert d["schema"] == "slurm-attr/diagnosis/v1"


@SETTINGS
@given(cut=st.integers(min_value=1, max_value=400))
def test_truncated_gzip_never_crashes(make_bundle, cut):
    import gzip
    data = gzip.compress(b"Nov 20 10:30:00 gpu-02 kernel: NVRM: Xid (PCI:0000:18:00): 79, x\n" * 50)
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog.2.gz": data[: min(cut, len(data) - 1)]}))
    assert d["errors"]
