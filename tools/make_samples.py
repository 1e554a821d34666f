"""Write the bundled sample jobs (sample_jobs/) from scenario definitions.

Each scenario states the failure it injects (the ground truth, written to expected.json) and the
cluster it happens on. Everything else is ordinary noise of the kind real nodes and training jobs
print, generated from a fixed seed so the files are reproducible. Run: python tools/make_samples.py
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import hostlist

OUT = Path(__file__).resolve().parent.parent / "sample_jobs"
MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DAY = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


# ----------------------------------------------------------------------------- timestamp styles
def rfc3164(t: datetime) -> str:
    return f"{MON[t.month - 1]} {t.day:2d} {t:%H:%M:%S}"


def iso(t: datetime) -> str:
    return t.isoformat(timespec="microseconds")


def dmesg_t(t: datetime) -> str:
    return f"[{DAY[t.weekday()]} {MON[t.month - 1]} {t.day:2d} {t:%H:%M:%S} {t.year}]"


def pylog(t: datetime) -> str:
    return f"{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d}"


def glog(t: datetime) -> str:
    return f"{t:%m%d %H:%M:%S}.{t.microsecond:06d}123"


@dataclass
class Job:
    name: str
    nodelist: str
    start: datetime
    end: datetime
    state: str
    exit_code: str
    job_id: int
    user: str = "alice"
    partition: str = "train"
    cluster: str = "hopper"
    tz: str = "UTC"
    syslog_style: str = "rfc3164"  # rfc3164 | iso | dmesg_t
    seed: int = 1
    node_lines: dict[str, list[tuple[datetime, str]]] = field(default_factory=dict)
    app_lines: list[tuple[datetime | None, str]] = field(default_factory=list)
    ctl_lines: list[tuple[datetime, str]] = field(default_factory=list)
    fm_lines: dict[str, list[tuple[datetime, str]]] = field(default_factory=dict)
    raw_dmesg: dict[str, list[tuple[float, str]]] = field(default_factory=dict)
    missing_nodes: set[str] = field(default_factory=set)
    expected: dict = field(default_factory=dict)
    extra_workload: dict = field(default_factory=dict)
    sacct_json: dict | None = None

    @property
    def nodes(self) -> list[str]:
        return hostlist.expand_hostlist(self.nodelist)

    def local(self, t: datetime) -> datetime:
        return t.astimezone(ZoneInfo(self.tz))

    def at(self, seconds: float) -> datetime:
        return self.start + timedelta(seconds=seconds)

    def kernel(self, node: str, sec: float, text: str, mono: float | None = None) -> None:
        prefix = f"[{mono:12.6f}] " if mono is not None else ""
        self.node_lines.setdefault(node, []).append((self.at(sec), f"kernel: {prefix}{text}"))

    def daemon(self, node: str, sec: float, prog: str, text: str) -> None:
        self.node_lines.setdefault(node, []).append((self.at(sec), f"{prog}: {text}"))

    def app(self, sec: float | None, text: str) -> None:
        self.app_lines.append((self.at(sec) if sec is not None else None, text))

    def ctl(self, sec: float, text: str) -> None:
        self.ctl_lines.append((self.at(sec), text))


# ----------------------------------------------------------------------------- noise
SYSLOG_NOISE = [
    ("systemd[1]", "Started Session {n} of User root."),
    ("systemd[1]", "session-{n}.scope: Deactivated successfully."),
    ("CRON[{pid}]", "(root) CMD (/usr/lib/sa/sa1 1 1)"),
    ("sshd[{pid}]", "Accepted publickey for svc-monitor from 10.12.{a}.{b} port {port} ssh2: ED25519 SHA256:x1Yk"),
    ("sshd[{pid}]", "pam_unix(sshd:session): session closed for user svc-monitor"),
    ("chronyd[{pid}]", "Selected source 10.12.0.{a} (ntp1.cluster.local)"),
    ("slurmd[{pid}]", "launch task StepId={job}.0 request from UID:{uid} GID:{uid} HOST:10.12.{a}.{b} PORT:{port}"),
    ("slurmd[{pid}]", "debug:  _rpc_terminate_job: uid = 64030 JobId={other}"),
    ("nvidia-persistenced[{pid}]", "device 0000:{bus}:00.0 - persistence mode enabled."),
    ("dcgm-exporter[{pid}]", "level=info msg=\"collecting metrics\" gpus=8 interval=30s"),
    ("node_exporter[{pid}]", "ts={ts} caller=collector.go:{n} level=info msg=\"scrape ok\" collector=cpu"),
    ("kernel", "IPv4: martian source 10.12.{a}.255 from 10.12.{a}.{b}, on dev ib0"),
    ("kernel", "audit: type=1400 audit({n}.{pid}:{n}): apparmor=\"STATUS\" operation=\"profile_load\""),
    ("kernel", "nvidia-nvlink: Unregistered Nvlink Core, major device number {n}"),
    ("rsyslogd[{pid}]", "imjournal: {n} messages lost due to rate-limiting (20000 allowed within 600 seconds)"),
    ("systemd-logind[{pid}]", "New session {n} of user alice."),
    ("telegraf[{pid}]", "[outputs.influxdb] wrote batch of {n} metrics in 12.1ms"),
    ("kernel", "mlx5_core 0000:{bus}:00.0: mlx5_pcie_event:301:(pid {pid}): PCIe slot advertised sufficient power (27W)."),
    ("dbus-daemon[{pid}]", "[system] Successfully activated service 'org.freedesktop.hostname1'"),
    ("slurmstepd[{pid}]", "done with job"),
]
APP_NOISE = [
    "[rank{r}]: step {step} | loss {loss:.4f} | lr 2.9e-04 | grad_norm 0.{n} | tokens/s {tps} | mem 61.2GiB",
    "{host}:{pid}:{pid2} [{dev}] NCCL INFO Channel {ch:02d}/0 : {r} -> {r2} via P2P/CUMEM/read",
    "{host}:{pid}:{pid2} [{dev}] NCCL INFO comm 0x55d1c{n} rank {r} nRanks {nranks} nNodes {nnodes} localRanks 8 localRank {dev} MNNVL 0",
    "{host}:{pid}:{pid2} [{dev}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB ; OOB ib0:10.12.{a}.{b}<0>",
    "[rank{r}]: {ts} | INFO | dataloader: prefetched shard {n} of 4096 (bytes=268435456)",
    "[rank{r}]: {ts} | INFO | checkpoint: saved optimizer shard {n} to /lustre/ckpt/run7/iter_{step}",
    "[rank{r}]: {ts} | WARNING | throughput below target for 3 steps (likely IO); continuing",
]


class Noise:
    def __init__(self, job: Job) -> None:
        self.rng = random.Random(job.seed)
        self.job = job

    def _vals(self, **extra) -> dict:
        r = self.rng
        return dict(n=r.randint(10, 99999), pid=r.randint(1000, 400000), pid2=r.randint(1000, 400000),
                    a=r.randint(0, 31), b=r.randint(2, 250), port=r.randint(30000, 65000),
                    job=self.job.job_id, other=self.job.job_id - r.randint(1, 400), uid=1000 + r.randint(0, 40),
                    bus=f"{r.choice([0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]):02x}",
                    step=r.randint(1000, 90000), loss=r.uniform(1.5, 3.2),
                    tps=r.randint(300000, 420000), ch=r.randint(0, 31), dev=r.randint(0, 7),
                    r2=r.randint(0, 255), nranks=len(self.job.nodes) * 8,
                    nnodes=len(self.job.nodes), **{"ts": iso(self.job.start), **extra})

    def node(self, node: str, count: int, lo: float, hi: float) -> list[tuple[datetime, str]]:
        out = []
        for _ in range(count):
            prog, text = self.rng.choice(SYSLOG_NOISE)
            v = self._vals()
            out.append((self.job.at(self.rng.uniform(lo, hi)), f"{prog.format(**v)}: {text.format(**v)}"))
        return out

    def app(self, count: int, lo: float, hi: float) -> list[tuple[datetime | None, str]]:
        out = []
        for _ in range(count):
            r = self.rng.randrange(len(self.job.nodes) * 8)
            host = self.job.nodes[r // 8]
            t = self.job.at(self.rng.uniform(lo, hi))
            v = self._vals(r=r, host=host, ts=pylog(self.job.local(t)))
            out.append((t, self.rng.choice(APP_NOISE).format(**v)))
        return out


# ----------------------------------------------------------------------------- writing
def syslog_line(job: Job, node: str, t: datetime, text: str) -> str:
    lt = job.local(t)
    if job.syslog_style == "iso":
        return f"{iso(lt)} {node} {text}"
    if job.syslog_style == "dmesg_t":
        return f"{dmesg_t(lt)} {text.split(': ', 1)[1] if text.startswith('kernel: ') else text}"
    return f"{rfc3164(lt)} {node} {text}"


def write(job: Job) -> None:
    root = OUT / job.name
    if root.exists():
        shutil.rmtree(root)
    (root / "app").mkdir(parents=True)
    noise = Noise(job)
    span = (job.end - job.start).total_seconds()
    for node in job.nodes:
        if node in job.missing_nodes:
            continue
        lines = job.node_lines.get(node, []) + noise.node(node, 260, -1800, span + 900)
        lines.sort(key=lambda x: x[0])
        d = root / "nodes" / node
        d.mkdir(parents=True)
        cut = len(lines) // 3
        name = "kern.log" if job.syslog_style == "dmesg_t" else "syslog"
        older, newer = lines[:cut], lines[cut:]
        rotated = "".join(syslog_line(job, node, t, x) + "\n" for t, x in older[: cut // 2])
        # mtime=0: the same scenario gives the same bytes on every run
        (d / f"{name}.2.gz").write_bytes(gzip.compress(rotated.encode(), mtime=0))
        (d / f"{name}.1").write_text("".join(syslog_line(job, node, t, x) + "\n"
                                             for t, x in older[cut // 2:]))
        (d / name).write_text("".join(syslog_line(job, node, t, x) + "\n" for t, x in newer))
        if node in job.fm_lines:
            fm = sorted(job.fm_lines[node])
            (d / "fabricmanager.log").write_text("".join(
                f"[{MON[job.local(t).month - 1]} {job.local(t).day:02d} {job.local(t):%Y %H:%M:%S}] {x}\n"
                for t, x in fm))
        if node in job.raw_dmesg:
            (d / "dmesg.txt").write_text("".join(f"[{m:12.6f}] {x}\n" for m, x in job.raw_dmesg[node]))
    app = [x for x in job.app_lines] + noise.app(max(600, 20 * len(job.app_lines)), 5, span - 5)
    app.sort(key=lambda x: (x[0] or job.end, ))
    text = "".join(line + "\n" for _, line in app)
    (root / "app" / f"slurm-{job.job_id}.out").write_text(text)
    if job.ctl_lines:
        (root / "controller").mkdir()
        (root / "controller" / "slurmctld.log").write_text("".join(
            f"[{job.local(t).strftime('%Y-%m-%dT%H:%M:%S')}.{t.microsecond // 1000:03d}] {x}\n"
            for t, x in sorted(job.ctl_lines)))
    workload = {
        "cluster": job.cluster, "job_id": str(job.job_id), "attempt": 0, "name": job.name,
        "user": job.user, "partition": job.partition, "nodes": job.nodelist,
        "start": job.local(job.start).isoformat(), "end": job.local(job.end).isoformat(),
        "state": job.state, "exit_code": job.exit_code, "timezone": job.tz, "gpus_per_node": 8,
        **job.extra_workload,
    }
    if job.sacct_json is not None:
        (root / "sacct.json").write_text(json.dumps(job.sacct_json, indent=2) + "\n")
        workload["sacct"] = "sacct.json"
    (root / "workload.json").write_text(json.dumps(workload, indent=2) + "\n")
    (root / "expected.json").write_text(json.dumps(job.expected, indent=2, sort_keys=True) + "\n")


# ----------------------------------------------------------------------------- cascades
def nccl_cascade(job: Job, dead_rank: int, sec: float, skip_nodes: tuple[str, ...] = ()) -> None:
    """What every other rank prints when one rank stops: watchdog timeouts, aborts, torchrun."""
    for r in range(0, len(job.nodes) * 8):
        if r == dead_rank or job.nodes[r // 8] in skip_nodes:
            continue
        t = job.local(job.at(sec + 600 + r * 0.01))
        job.app(sec + 600 + r * 0.01,
                f"[rank{r}]:[E{glog(t)} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective "
                f"operation timeout: WorkNCCL(SeqNum=48211, OpType=ALLREDUCE, NumelIn=524288, "
                f"NumelOut=524288, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.")
    for i, node in enumerate(job.nodes):
        t = job.at(sec + 612 + i)
        job.app(sec + 612 + i, f"E{glog(job.local(t))} torch/distributed/elastic/multiprocessing/api.py:"
                               f"869] failed (exitcode: -6) local_rank: 0 (pid: {40000 + i}) of binary: "
                               f"/usr/bin/python3")
        job.app(sec + 612.5 + i, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
        job.app(sec + 613 + i, f"srun: error: {node}: task {i}: Exited with exit code 1")


def start_time(day: int, hour: int) -> datetime:
    return datetime(2026, 11, day, hour, 7, 12, tzinfo=UTC)


# ----------------------------------------------------------------------------- scenarios
def s_xid149_nvlink() -> Job:
    s = start_time(24, 2)
    job = Job("xid149-nvlink-signal-integrity", "node-[01-04]", s, s + timedelta(hours=3, minutes=12),
              "FAILED", "1:0", 880412, seed=149)
    job.kernel("node-02", 9420, "NVRM: Xid (PCI:0018:01:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 08 "
               "(0x004505c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)", 171167.620236)
    job.kernel("node-02", 9420.4, "NVRM: Xid (PCI:0018:01:00): 154, GPU recovery action changed from 0x0 "
               "(None) to 0x4 (Drain and Reset)", 171167.621162)
    job.kernel("node-02", 9421, "NVRM: Xid (PCI:0018:01:00): 45, pid=88121, name=python3, Ch 00000001 "
               "caused by previous Xid 149", 171168.1)
    job.app(9423, "node-01:77120:77311 [3] NCCL WARN NET/IB : Got completion from peer 10.12.0.12<52130> "
                  "with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.12.0.11 "
                  "remoteGids ::ffff:10.12.0.12 hca mlx5_2")
    job.app(9424, "[rank21]: torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/torch/csrc/"
                  "distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, "
                  "NCCL version 2.21.5")
    job.app(9425, "node-04:80911:81002 [6] NCCL WARN Net : Connection closed by remote peer "
                  "node-02.cluster.local<41234>")
    job.expected = {"outcome": "hardware", "sub_domain": "nvlink", "root_cause": {"code": "XID 149",
                    "nodes": ["node-02"]}, "affected_nodes": ["node-02"],
                    "demoted_kinds_at_least": {"nccl_error": 3}}
    return job


def s_xid79() -> Job:
    s = start_time(25, 14)
    job = Job("xid79-gpu-off-bus", "gpu-[001-008]", s, s + timedelta(hours=6, minutes=3), "FAILED", "1:0",
              881977, tz="America/Chicago", seed=79, user="bob", partition="h100")
    sec = 19830
    job.kernel("gpu-005", sec - 0.4, "pcieport 0000:17:01.0: pciehp: Slot(25): Link Down")
    job.kernel("gpu-005", sec - 0.3, "pcieport 0000:17:01.0: AER: Uncorrected (Fatal) error received: 0000:18:00.0")
    job.kernel("gpu-005", sec, "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has "
               "fallen off the bus.")
    job.kernel("gpu-005", sec + 0.1, "NVRM: GPU 0000:18:00.0: GPU has fallen off the bus.")
    job.app(sec + 2, "[rank35]: RuntimeError: CUDA error: unknown error")
    job.app(sec + 2.1, "[rank35]: CUDA kernel errors might be asynchronously reported at some other API call, "
                       "so the stacktrace below might be incorrect.")
    nccl_cascade(job, 35, sec)
    job.expected = {"outcome": "hardware", "sub_domain": "gpu", "root_cause": {"code": "XID 79",
                    "nodes": ["gpu-005"]}, "affected_nodes": ["gpu-005"],
                    "demoted_kinds_at_least": {"collective_timeout": 50, "pcie_error": 1}}
    return job


def s_xid48() -> Job:
    s = start_time(26, 9)
    job = Job("xid48-hbm-ecc", "dgx-a[12-15]", s, s + timedelta(hours=2, minutes=44), "FAILED", "1:0",
              882310, syslog_style="iso", tz="Europe/Berlin", seed=48, user="chen")
    sec = 8120
    job.kernel("dgx-a14", sec, "NVRM: Xid (PCI:0000:5d:00): 48, pid=913002, name=python3, An uncorrectable "
               "double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.")
    job.kernel("dgx-a14", sec + 0.2, "NVRM: Xid (PCI:0000:5d:00): 94, pid=913002, name=python3, Contained: "
               "SM (0x1). RST: No, D-RST: No")
    job.kernel("dgx-a14", sec + 0.4, "NVRM: Xid (PCI:0000:5d:00): 63, pid='<unknown>', name=<unknown>, Row "
               "Remapper: New row (0x000000021f3e1200) marked for remapping, reset gpu to activate.")
    job.app(sec + 1, "[rank19]: Traceback (most recent call last):")
    job.app(sec + 1, '[rank19]:   File "/workspace/train.py", line 412, in <module>')
    job.app(sec + 1, '[rank19]:   File "/workspace/train.py", line 377, in train_step')
    job.app(sec + 1, "[rank19]: RuntimeError: CUDA error: uncorrectable ECC error encountered")
    nccl_cascade(job, 19, sec)
    job.sacct_json = sacct_2205(job, exit_code_status="SUCCESS")
    job.expected = {"outcome": "hardware", "sub_domain": "gpu_memory", "root_cause": {"code": "XID 48",
                    "nodes": ["dgx-a14"]}, "affected_nodes": ["dgx-a14"], "workload": {"exit_code": "1:0"}}
    return job


def sacct_2205(job: Job, exit_code_status: str) -> dict:
    """A 22.05-shaped sacct --json document (its job exit_code reads SUCCESS for a 1:0 exit)."""
    return {"meta": {"plugin": {"type": "openapi/dbv0.0.38", "name": "Slurm OpenAPI DB v0.0.38"},
                     "Slurm": {"version": {"major": 22, "micro": 8, "minor": 5}, "release": "22.05.8"}},
            "errors": [], "jobs": [{
                "account": "ml", "cluster": job.cluster, "job_id": job.job_id, "name": job.name,
                "user": job.user, "partition": job.partition, "nodes": job.nodelist,
                "state": {"current": job.state, "reason": "NonZeroExitCode"},
                "exit_code": {"status": exit_code_status, "return_code": 0},
                "derived_exit_code": {"status": "SUCCESS", "return_code": 0},
                "time": {"start": int(job.start.timestamp()), "end": int(job.end.timestamp()),
                         "elapsed": int((job.end - job.start).total_seconds())},
                "steps": [
                    {"step": {"name": "batch", "id": "batch"}, "state": "FAILED",
                     "exit_code": {"status": "FAILED", "return_code": 1},
                     "nodes": {"range": job.nodes[0], "count": 1},
                     "time": {"start": int(job.start.timestamp()), "end": int(job.end.timestamp())}},
                    {"step": {"name": "python3", "id": 0}, "state": "FAILED",
                     "exit_code": {"status": "FAILED", "return_code": 1},
                     "nodes": {"range": job.nodelist, "count": len(job.nodes)},
                     "time": {"start": int(job.start.timestamp()) + 3, "end": int(job.end.timestamp())}},
                ]}]}


def s_xid74() -> Job:
    s = start_time(27, 21)
    job = Job("xid74-nvlink-raw-dmesg", "hgx-[101-104]", s, s + timedelta(hours=1, minutes=31), "FAILED", "1:0",
              882977, seed=74, user="dana")
    sec = 4410
    boot_mono = 86400.0 * 3
    # syslog carries the kernel's monotonic stamp on a few lines: that places the raw dmesg below.
    job.kernel("hgx-103", 30, "nvidia-nvlink: Nvlink Core is being initialized", boot_mono + 30)
    job.raw_dmesg["hgx-103"] = [
        (boot_mono - 5000 + i * 37.0, "IPv4: martian source 10.12.3.255 from 10.12.3.44, on dev ib0")
        for i in range(120)
    ] + [(boot_mono + sec, "NVRM: Xid (PCI:0000:ab:00): 74, pid='<unknown>', name=<unknown>, NVLink: "
                           "fatal error detected on link 14(0x200000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)")]
    job.raw_dmesg["hgx-103"].sort()
    job.app(sec + 3, "[rank26]: RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution")
    nccl_cascade(job, 26, sec)
    job.expected = {"outcome": "hardware", "sub_domain": "nvlink", "root_cause": {"code": "XID 74",
                    "nodes": ["hgx-103"]}, "affected_nodes": ["hgx-103"]}
    return job


def s_sxid() -> Job:
    s = start_time(23, 11)
    job = Job("sxid-nvswitch-fatal", "hgx-[201-204]", s, s + timedelta(hours=4), "FAILED", "1:0", 879001,
              seed=20034, syslog_style="iso", user="erin")
    sec = 7201
    job.kernel("hgx-202", sec, "nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 20034, Fatal, Link 33 LTSSM Fault Up")
    job.kernel("hgx-202", sec + 0.01, "nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 20034, Severity 1 Engine "
               "instance 33 Sub-engine instance 00")
    job.fm_lines["hgx-202"] = [(job.at(sec + 1), "[ERROR] [tid 841] detected NVSwitch fatal error 20034 on "
                                "fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33")] + [
        (job.at(600 * i), f"[INFO] [tid 841] heartbeat {i}: fabric state healthy") for i in range(20)]
    job.app(sec + 2, "hgx-202:6617:6700 [5] NCCL WARN Cuda failure 'uncorrectable NVLink error detected during "
                     "the execution'")
    nccl_cascade(job, 13, sec)
    job.expected = {"outcome": "hardware", "sub_domain": "nvlink", "root_cause": {"code": "SXid 20034",
                    "nodes": ["hgx-202"]}}
    return job


def s_ib_link() -> Job:
    s = start_time(22, 5)
    job = Job("ib-link-down", "gpu-[011-018]", s, s + timedelta(hours=8, minutes=5), "FAILED", "1:0", 878555,
              seed=12, user="frank", tz="Asia/Tokyo")
    sec = 21007
    job.kernel("gpu-016", sec, "mlx5_core 0000:9a:00.0 ibp154s0: Link down")
    job.kernel("gpu-016", sec + 40, "mlx5_core 0000:9a:00.0 ibp154s0: Link up")
    for r, node in ((0, "gpu-011"), (17, "gpu-013"), (43, "gpu-016")):
        job.app(sec + 18, f"{node}:5120{r}:5130{r} [{r % 8}] NCCL WARN NET/IB : Got completion from peer "
                          f"10.12.2.{30 + r}<4021{r % 10}> with status=12 opcode=0 len=0 vendor err 129 (Recv)")
    job.app(sec + 17, "gpu-016:51243:51330 [3] NCCL WARN NET/IB : Got async event : port error")
    nccl_cascade(job, 43, sec)
    job.expected = {"outcome": "infrastructure", "sub_domain": "network", "root_cause": {
        "code": "NIC link down", "nodes": ["gpu-016"]}}
    return job


def s_nfs() -> Job:
    s = start_time(21, 18)
    job = Job("nfs-server-timeout", "cpu-gpu-[07-10]", s, s + timedelta(hours=2), "FAILED", "1:0", 877100,
              seed=5, user="gina", syslog_style="dmesg_t")
    sec = 5011
    for node in job.nodes:
        job.kernel(node, sec, "nfs: server datastore02.cluster.local not responding, timed out")
    job.kernel("cpu-gpu-08", sec + 122, "INFO: task pt_data_worker:291130 blocked for more than 120 seconds.")
    job.app(sec + 30, "[rank12]: Traceback (most recent call last):")
    job.app(sec + 30, '[rank12]:   File "/home/gina/src/data.py", line 88, in __getitem__')
    job.app(sec + 30, "[rank12]: OSError: [Errno 5] Input/output error: '/datasets/laion/shard-01207.tar'")
    nccl_cascade(job, 12, sec + 30)
    job.expected = {"outcome": "infrastructure", "sub_domain": "storage", "root_cause": {"code": "NFS timeout"}}
    return job


def s_enospc() -> Job:
    s = start_time(20, 8)
    job = Job("checkpoint-disk-full", "gpu-[101-104]", s, s + timedelta(hours=5, minutes=2), "FAILED", "1:0",
              876200, seed=28, user="hana")
    sec = 18000
    job.app(sec, f"[rank0]: {pylog(job.at(sec))} | INFO | checkpoint: saving iteration 24000")
    job.app(sec + 40, "[rank0]: Traceback (most recent call last):")
    job.app(sec + 40, '[rank0]:   File "/opt/megatron/checkpointing.py", line 401, in save_checkpoint')
    job.app(sec + 40, "[rank0]: OSError: [Errno 28] No space left on device")
    nccl_cascade(job, 0, sec + 40)
    job.expected = {"outcome": "infrastructure", "sub_domain": "storage", "root_cause": {"nodes": ["gpu-101"]}}
    return job


def s_kernel_panic() -> Job:
    s = start_time(19, 3)
    job = Job("kernel-panic-node-fail", "gpu-[201-216]", s, s + timedelta(hours=9, minutes=22), "NODE_FAIL",
              "0:0", 875001, seed=92, user="ivan", syslog_style="iso")
    sec = 33100
    job.kernel("gpu-209", sec - 50, "mce: [Hardware Error]: Machine check events logged")
    job.kernel("gpu-209", sec - 20, "EDAC MC1: 1 UE memory read error on CPU_SrcID#1_Ha#0_Chan#2_DIMM#0 "
               "(channel:2 slot:0 page:0x4c8e21 offset:0x0 grain:32)")
    job.kernel("gpu-209", sec, "Kernel panic - not syncing: Fatal machine check")
    job.ctl(sec + 300, "error: Nodes gpu-209 not responding, setting DOWN")
    job.ctl(sec + 301, f"Killing JobId={job.job_id} on failed node gpu-209")
    job.ctl(sec + 1200, "error: Nodes gpu-210 not responding")
    job.end = job.at(sec + 301)
    nccl_cascade(job, 64, sec, skip_nodes=("gpu-209",))
    job.expected = {"outcome": "hardware", "sub_domain": "host", "root_cause": {
        "code": "Host memory UE", "nodes": ["gpu-209"]}, "affected_nodes": ["gpu-209"]}
    return job


def s_app_exception() -> Job:
    s = start_time(28, 10)
    job = Job("app-filenotfound", "gpu-[031-034]", s, s + timedelta(minutes=4, seconds=11), "FAILED", "1:0",
              883001, seed=404, user="jules")
    sec = 190
    for r in (0, 8, 16, 24):
        job.app(sec + r * 0.05, f"[rank{r}]: Traceback (most recent call last):")
        job.app(sec + r * 0.05, f'[rank{r}]:   File "/home/jules/llm/data/loader.py", line 57, in open_split')
        job.app(sec + r * 0.05, f"[rank{r}]: FileNotFoundError: [Errno 2] No such file or directory: "
                                "'/data/tokenized/val_000.bin'")
    job.app(sec + 1, "[rank3]: torch.distributed.DistBackendError: NCCL communicator was aborted on rank 3.")
    job.app(sec + 2, "gpu-032:9911:9980 [1] NCCL WARN Net : Connection closed by remote peer gpu-031<52011>")
    job.app(sec + 4, "srun: error: gpu-031: task 0: Exited with exit code 1")
    job.expected = {"outcome": "application", "sub_domain": "application", "root_cause": {
        "code": "FileNotFoundError", "nodes": ["gpu-031"]}}
    return job


def s_cuda_oom() -> Job:
    s = start_time(28, 16)
    job = Job("cuda-oom", "gpu-[041-042]", s, s + timedelta(minutes=31), "FAILED", "1:0", 883115, seed=2,
              user="kim", tz="America/New_York")
    sec = 1700
    job.app(sec, "[rank5]: Traceback (most recent call last):")
    job.app(sec, '[rank5]:   File "/home/kim/train.py", line 230, in forward')
    job.app(sec, "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 5 has a "
                 "total capacity of 79.11 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this "
                 "process has 78.07 GiB memory in use.")
    nccl_cascade(job, 5, sec)
    job.expected = {"outcome": "application", "sub_domain": "gpu_oom", "root_cause": {"code": "CUDA OOM",
                    "nodes": ["gpu-041"]}}
    return job


def s_host_oom() -> Job:
    s = start_time(27, 4)
    job = Job("host-oom-cgroup", "cpu-gpu-[21-22]", s, s + timedelta(minutes=52), "OUT_OF_MEMORY", "0:125",
              882700, seed=137, user="lee")
    sec = 3100
    job.kernel("cpu-gpu-22", sec, "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, "
               "oom_score_adj=0")
    job.kernel("cpu-gpu-22", sec + 0.1, "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,"
               f"mems_allowed=0-1,oom_memcg=/slurm/uid_1042/job_{job.job_id},task_memcg=/slurm/uid_1042/job_"
               f"{job.job_id}/step_0/task_3,task=python3,pid=77121,uid=1042")
    job.kernel("cpu-gpu-22", sec + 0.1, "Memory cgroup out of memory: Killed process 77121 (python3) "
               "total-vm:512331200kB, anon-rss:498112000kB, file-rss:0kB, shmem-rss:0kB, UID:1042")
    job.kernel("cpu-gpu-21", sec - 900, "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,"
               "mems_allowed=0-1,oom_memcg=/slurm/uid_1001/job_882555,task_memcg=/slurm/uid_1001/job_882555/"
               "step_0,task=R,pid=5511,uid=1001")
    job.app(sec + 2, "slurmstepd: error: Detected 1 oom_kill event in StepId=882700.0. Some of the step tasks "
                     "have been OOM Killed.")
    job.app(sec + 3, "srun: error: cpu-gpu-22: task 11: Out Of Memory")
    job.app(sec + 3, "[rank2]: RuntimeError: DataLoader worker (pid(s) 77121) exited unexpectedly")
    job.expected = {"outcome": "application", "sub_domain": "host_oom", "affected_nodes": ["cpu-gpu-22"]}
    return job


def s_timeout() -> Job:
    s = start_time(26, 0)
    job = Job("time-limit", "gpu-[051-054]", s, s + timedelta(hours=24, seconds=31), "TIMEOUT", "0:0", 882003,
              seed=24, user="mia")
    sec = 86400
    job.app(sec, f"slurmstepd: error: *** JOB {job.job_id} ON gpu-051 CANCELLED AT "
                 f"{job.local(job.at(sec)):%Y-%m-%dT%H:%M:%S} DUE TO TIME LIMIT ***")
    job.app(sec + 1, "[rank0]: Traceback (most recent call last):")
    job.app(sec + 1, '[rank0]:   File "/home/mia/train.py", line 512, in <module>')
    job.app(sec + 1, "[rank0]: torch.distributed.elastic.multiprocessing.api.SignalException: Process 88101 "
                     "got signal: 15")
    job.app(sec + 2, "[rank9]: RuntimeError: DataLoader worker (pid 99121) is killed by signal: Terminated.")
    job.ctl(sec, f"Time limit exhausted for JobId={job.job_id}")
    job.expected = {"outcome": "user", "sub_domain": "time_limit"}
    return job


def s_preempted() -> Job:
    s = start_time(25, 6)
    job = Job("preempted", "gpu-[061-062]", s, s + timedelta(hours=3, minutes=3), "PREEMPTED", "0:0", 881500,
              seed=33, user="noor", partition="preemptible")
    sec = 3 * 3600 + 120
    job.app(sec, f"slurmstepd: error: *** STEP {job.job_id}.0 ON gpu-061 CANCELLED AT "
                 f"{job.local(job.at(sec)):%Y-%m-%dT%H:%M:%S} DUE TO PREEMPTION ***")
    job.app(sec + 1, "[rank4]: RuntimeError: NCCL communicator was aborted on rank 4.")
    job.expected = {"outcome": "scheduler", "sub_domain": "preemption"}
    return job


def s_cancelled() -> Job:
    s = start_time(24, 19)
    job = Job("cancelled-by-user", "gpu-[071-072]", s, s + timedelta(minutes=47), "CANCELLED", "0:15", 880900,
              seed=15, user="omar", extra_workload={"reason": "by 1057"})
    sec = 47 * 60 - 2
    job.app(sec, f"slurmstepd: error: *** JOB {job.job_id} ON gpu-071 CANCELLED AT "
                 f"{job.local(job.at(sec)):%Y-%m-%dT%H:%M:%S} ***")
    job.app(sec + 1, "[rank0]: KeyboardInterrupt")
    job.ctl(sec - 1, f"_slurm_rpc_kill_job: REQUEST_KILL_JOB JobId={job.job_id} uid 1057")
    job.expected = {"outcome": "user", "sub_domain": "cancelled"}
    return job


def s_ambiguous() -> Job:
    s = start_time(23, 1)
    job = Job("two-independent-faults", "gpu-[301-308]", s, s + timedelta(hours=5), "FAILED", "1:0", 879400,
              seed=2929, user="pat")
    sec = 14000
    job.kernel("gpu-303", sec, "NVRM: Xid (PCI:0000:3a:00): 79, pid='<unknown>', name=<unknown>, GPU has "
               "fallen off the bus.")
    job.kernel("gpu-307", sec + 25, "Kernel panic - not syncing: Hard LOCKUP")
    nccl_cascade(job, 20, sec)
    job.expected = {"outcome": "unknown", "sub_domain": "ambiguous",
                    "candidates": [{"sub_domain": "gpu", "node": "gpu-303"},
                                   {"sub_domain": "host", "node": "gpu-307"}]}
    return job


def s_missing_logs() -> Job:
    s = start_time(22, 13)
    job = Job("hang-missing-node-logs", "gpu-[401-408]", s, s + timedelta(hours=7, minutes=10), "FAILED", "1:0",
              878900, seed=404404, user="quinn")
    sec = 24000
    job.missing_nodes = {"gpu-406"}
    nccl_cascade(job, 41, sec, skip_nodes=("gpu-406",))
    job.expected = {"outcome": "unknown", "sub_domain": "unknown",
                    "coverage_missing": ["node_syslog/gpu-406"]}
    return job


def s_gsp() -> Job:
    s = start_time(21, 2)
    job = Job("xid119-gsp-timeout", "node[17-20]", s, s + timedelta(hours=2, minutes=2), "FAILED", "1:0",
              877002, seed=119, user="ravi", syslog_style="iso", tz="Europe/London")
    sec = 4500
    job.kernel("node19", sec, "NVRM: Xid (PCI:0000:9a:00): 119, pid=1183, name=python3, Timeout after 6s of "
               "waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x2080012c 0x8).")
    job.kernel("node19", sec + 1, "NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:9a:00 "
               "(printing 1 of every 30).  The GPU likely needs to be reset.")
    nccl_cascade(job, 28, sec)
    job.expected = {"outcome": "hardware", "sub_domain": "gpu", "root_cause": {"code": "XID 119",
                    "nodes": ["node19"]}}
    return job


def s_node_down_admin() -> Job:
    s = start_time(20, 15)
    job = Job("node-set-down", "gpu-[501-504]", s, s + timedelta(hours=1, minutes=5), "NODE_FAIL", "0:0",
              876800, seed=503, user="sam", extra_workload={"failed_node": "gpu-503"})
    sec = 3890
    job.ctl(sec - 1, "update_node: node gpu-503 reason set to: NHC: check_hw_ib: mlx5_0 port 1 state DOWN")
    job.ctl(sec, "update_node: node gpu-503 state set to DOWN")
    job.ctl(sec + 1, f"Killing JobId={job.job_id} on failed node gpu-503")
    job.end = job.at(sec + 1)
    job.expected = {"outcome": "infrastructure", "sub_domain": "network",
                    "root_cause": {"code": "Health check (network)", "nodes": ["gpu-503"]}}
    return job


def s_gpu_lost_no_xid() -> Job:
    """A GPU lost with only the driver's three-line message (no Xid 79 line) in raw dmesg."""
    s = start_time(19, 6)
    job = Job("gpu-lost-no-xid", "gpu-[601-604]", s, s + timedelta(hours=2, minutes=40), "FAILED", "1:0",
              876610, seed=601, user="tess")
    sec = 8000
    job.raw_dmesg["gpu-603"] = [
        (88123.204511, "mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE"),
        (96110.308145, "NVRM: The NVIDIA GPU 0000:5d:00.0\n"
                       "               NVRM: (PCI ID: 10de:2330) installed in this system has\n"
                       "               NVRM: fallen off the bus and is not responding to commands."),
        (96110.439662, "NVRM: The NVIDIA probe routine failed for 1 device(s)."),
    ]
    nccl_cascade(job, 19, sec)
    job.expected = {"outcome": "hardware", "sub_domain": "gpu",
                    "root_cause": {"code": "XID 79", "nodes": ["gpu-603"]}}
    return job


def s_nic_module_fault() -> Job:
    """A transceiver overheats on one node; NCCL on the other nodes reports IB errors."""
    s = start_time(18, 9)
    job = Job("nic-module-fault", "gpu-[611-614]", s, s + timedelta(hours=4, minutes=2), "FAILED", "1:0",
              876420, seed=612, user="uma", syslog_style="iso")
    sec = 11000
    job.kernel("gpu-612", sec, "mlx5_core 0000:1a:00.0: Port module event[error]: module 0, Cable error, "
               "High Temperature")
    job.kernel("gpu-612", sec + 1, "mlx5_core 0000:1a:00.0 ibp26s0: Link down")
    for r in (0, 17, 29):
        host = job.nodes[r // 8]
        job.app(sec + 20 + r, f"{host}:{3000 + r}:{3100 + r} [{r % 8}] transport/net_ib.cc:2360 NCCL WARN "
                              f"NET/IB: Got completion from peer 10.12.3.12<41000> with status=12 opcode=0 "
                              f"len=0 vendor err 129 (Recv) localGid ::ffff:10.12.3.{r} "
                              f"remoteGids::ffff:10.12.3.12 hca mlx5_0")
    nccl_cascade(job, 9, sec)
    job.expected = {"outcome": "infrastructure", "sub_domain": "network",
                    "root_cause": {"code": "NIC cable", "nodes": ["gpu-612"]},
                    "demoted_kinds_at_least": {"nccl_error": 3}}
    return job


def s_hung_task_nfs() -> Job:
    """Ranks on one node stuck in NFS code while saving a checkpoint; the others time out."""
    s = start_time(17, 22)
    job = Job("hung-task-nfs", "cpu-gpu-[31-32]", s, s + timedelta(hours=3), "FAILED", "1:0", 876333,
              seed=31, user="vic")
    sec = 9000
    frames = ["INFO: task python3:51200 blocked for more than 120 seconds.",
              "      Tainted: P           OE     5.15.0-105-generic #115-Ubuntu",
              '"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.',
              "task:python3         state:D stack:    0 pid:51200 ppid: 51100 flags:0x00004002",
              "Call Trace:", " <TASK>", " __schedule+0x24e/0x590", " schedule+0x69/0x110",
              " rpc_wait_bit_killable+0x11/0x70 [sunrpc]", " __rpc_execute+0x12e/0x4a0 [sunrpc]",
              " nfs4_do_close+0x2ee/0x3c0 [nfsv4]", " nfs_file_release+0x3f/0x60 [nfs]", " </TASK>"]
    for i, text in enumerate(frames):
        job.kernel("cpu-gpu-32", sec + i * 0.001, text)
    job.kernel("cpu-gpu-32", sec - 300, "nfs: server nas01.cluster.local not responding, still trying")
    nccl_cascade(job, 3, sec - 400)
    job.expected = {"outcome": "infrastructure", "sub_domain": "storage",
                    "root_cause": {"nodes": ["cpu-gpu-32"]}}
    return job


def s_desync() -> Job:
    """Rank 5 skips a collective (a rank-dependent branch): PyTorch's desync report names it."""
    s = start_time(16, 4)
    job = Job("nccl-desync", "gpu-[621-622]", s, s + timedelta(hours=1, minutes=20), "FAILED", "1:0", 876001,
              seed=621, user="wen")
    sec = 3600
    nccl_cascade(job, 5, sec)
    t = job.local(job.at(sec + 601))
    job.app(sec + 601, f"[rank0]:[E{glog(t)} ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] - To our best "
                       "knowledge, the lagging/dead/mismatched ranks that caused the desync are:")
    job.app(sec + 601.1, "[rank0]:   - [5] finished collective #48210, but didn't join collective #48211 "
                         "(count from 1)")
    job.expected = {"outcome": "application", "sub_domain": "application",
                    "root_cause": {"code": "collective desync"},
                    "demoted_kinds_at_least": {"collective_timeout": 10}}
    return job


def s_time_limit_signal() -> Job:
    """submitit requeues on the warning signal sent 120 s before the limit (--signal=USR2@120)."""
    s = start_time(15, 1)
    job = Job("time-limit-signal-requeue", "gpu-[631-632]", s, s + timedelta(hours=24, seconds=3),
              "REQUEUED", "0:0", 875500, seed=631, user="xia")
    sec = 24 * 3600 - 120
    job.app(sec, f"submitit WARNING ({pylog(job.local(job.at(sec)))}) - Caught signal SIGUSR2 on gpu-631: "
                 "this job is preempted.")
    job.app(sec + 1, f"submitit INFO ({pylog(job.local(job.at(sec + 1)))}) - Requeued job {job.job_id} "
                     "(3 remaining timeouts)")
    job.app(sec + 2, f"slurmstepd: error: *** JOB {job.job_id} ON gpu-631 CANCELLED AT "
                     f"{job.local(job.at(sec + 2)):%Y-%m-%dT%H:%M:%S} DUE TO JOB REQUEUE ***")
    job.expected = {"outcome": "user", "sub_domain": "time_limit"}
    return job


def s_exit_only() -> Job:
    """A job that exits 3 with nothing but training noise: the job's own failure, as a hypothesis."""
    s = start_time(14, 8)
    job = Job("exit-code-only", "gpu-[641-642]", s, s + timedelta(minutes=18), "FAILED", "3:0", 875300,
              seed=641, user="yan")
    job.expected = {"outcome": "application", "sub_domain": "application",
                    "root_cause": {"code": "exit 3:0"}}
    return job


def s_xid31_user_fault() -> Job:
    """The job's own kernel reads a bad address: Xid 31 names the job's process, and the job's
    output says illegal memory access. The code's fault, not the GPU's."""
    s = start_time(13, 10)
    job = Job("xid31-user-mmu-fault", "gpu-[651-652]", s, s + timedelta(minutes=47), "FAILED", "1:0", 875120,
              seed=651, user="zed")
    sec = 2500
    job.kernel("gpu-652", sec, "NVRM: Xid (PCI:0000:3b:00): 31, pid=61234, name=python3, Ch 00000018, intr "
               "00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_3 faulted @ 0x7f2a_3c000000. Fault is of "
               "type FAULT_PDE ACCESS_TYPE_VIRT_READ")
    job.app(sec + 1, "[rank11]: Traceback (most recent call last):")
    job.app(sec + 1, '[rank11]:   File "/workspace/custom_ops/gather.py", line 88, in forward')
    job.app(sec + 1, "[rank11]: RuntimeError: CUDA error: an illegal memory access was encountered")
    nccl_cascade(job, 11, sec)
    job.expected = {"outcome": "application", "sub_domain": "application"}
    return job


def s_lustre() -> Job:
    """A client loses its Lustre servers (LNet timeouts, ptlrpc requests failing); its ranks stop
    in I/O and every other rank's collective times out."""
    s = start_time(12, 3)
    job = Job("lustre-client-evicted", "gpu-[661-664]", s, s + timedelta(hours=5, minutes=30), "FAILED", "1:0",
              874900, seed=661, user="ada", syslog_style="iso")
    sec = 15000
    job.kernel("gpu-663", sec, "LNetError: 2431:0:(o2iblnd_cb.c:3399:kiblnd_check_txs_locked()) Timed out tx: "
               "tx_queue, 12 seconds")
    job.kernel("gpu-663", sec + 1, "LNetError: 2431:0:(o2iblnd_cb.c:3474:kiblnd_check_conns()) Timed out RDMA "
               "with 10.20.0.5@o2ib (62): c: 0, oc: 0, rc: 8")
    job.kernel("gpu-663", sec + 30, "Lustre: 2449:0:(client.c:2146:ptlrpc_expire_one_request()) @@@ Request "
               "sent has timed out for slow reply: [sent 1700000000/real 1700000000]  req@ffff8a0e1 "
               "x1780000000000/t0(0) o4->scratch-OST0007-osc-ffff8a0e2@10.20.0.5@o2ib:6/4 lens 488/448 e 0 "
               "to 1 dl 1700000045 ref 2 fl Rpc:X/0/ffffffff rc 0/-1")
    job.kernel("gpu-663", sec + 95, "LustreError: 11-0: scratch-OST0007-osc-ffff8a0e2: operation ost_write "
               "to node 10.20.0.5@o2ib failed: rc = -107")
    job.kernel("gpu-663", sec + 96, "LustreError: 167-0: scratch-OST0007-osc-ffff8a0e2: This client was "
               "evicted by scratch-OST0007; in progress operations using this service will fail.")
    nccl_cascade(job, 20, sec + 60)
    job.expected = {"outcome": "infrastructure", "sub_domain": "storage",
                    "root_cause": {"nodes": ["gpu-663"]}}
    return job


def s_ecc_in_output() -> Job:
    """No kernel log reached us; the job's output says which host's GPU had the uncorrectable
    ECC error (NCCL's host:pid:tid prefix), and that rank's later OOM is the same fault."""
    s = start_time(11, 18)
    job = Job("ecc-in-job-output", "dgx-[20-23]", s, s + timedelta(hours=9, minutes=12), "FAILED", "1:0",
              874700, seed=2021, user="bea")
    job.missing_nodes = set(job.nodes)
    sec = 31000
    job.app(sec, "dgx-22:90512:91033 [4] include/alloc.h:114 NCCL WARN Cuda failure 'uncorrectable ECC "
                 "error encountered'")
    job.app(sec + 0.5, "[rank20]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. "
                       "GPU 4 has a total capacity of 79.10 GiB of which 0 bytes is free.")
    nccl_cascade(job, 20, sec)
    job.expected = {"outcome": "hardware", "sub_domain": "gpu_memory", "root_cause": {"nodes": ["dgx-22"]}}
    return job


def s_node_failure_in_output() -> Job:
    """The node died; only srun's line names it (no controller log, no logs from that node)."""
    s = start_time(10, 7)
    job = Job("node-failure-in-output", "cn[1101-1104]", s, s + timedelta(hours=2, minutes=5), "NODE_FAIL",
              "0:0", 874500, seed=1101, user="cyd")
    job.missing_nodes = {"cn1103"}
    sec = 7300
    job.app(sec, "srun: error: Node failure on cn1103")
    job.app(sec + 1, f"slurmstepd: error: *** STEP {job.job_id}.0 ON cn1101 CANCELLED AT "
                     f"{job.local(job.at(sec + 1)):%Y-%m-%dT%H:%M:%S} DUE TO NODE FAILURE, SEE SLURMCTLD "
                     "LOG FOR DETAILS ***")
    job.app(sec + 2, "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    job.expected = {"outcome": "hardware", "sub_domain": "host", "root_cause": {"nodes": ["cn1103"]}}
    return job


def s_amd_hbm_uncorrectable() -> Job:
    """An AMD Instinct node: the driver counts an uncorrectable HBM error and resets the GPU; the
    rank on it reports a memory access fault, every other rank times out in RCCL."""
    s = start_time(12, 9)
    job = Job("amd-hbm-uncorrectable", "mi300-[041-044]", s, s + timedelta(hours=5, minutes=40), "FAILED",
              "1:0", 874920, seed=4143, user="dana", partition="mi300", syslog_style="iso")
    sec = 17400
    job.kernel("mi300-043", sec, "amdgpu 0000:c1:00.0: amdgpu: 1 uncorrectable hardware errors detected in "
                                 "umc block")
    job.kernel("mi300-043", sec + 0.3, "amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!")
    job.app(sec + 1, "[rank21]: Memory access fault by GPU node-7 (Agent handle: 0x5629e3c1e0a0) on address "
                     "0x7f2a53193000. Reason: Unknown.")
    nccl_cascade(job, 21, sec)
    job.expected = {"outcome": "hardware", "sub_domain": "gpu_memory", "root_cause": {"nodes": ["mi300-043"]}}
    return job


def s_transport_mismatch() -> Job:
    """One node lacks the NCCL network plugin the others load: its ranks fall back to sockets and
    the first collective across nodes never completes. No line says error until the watchdog."""
    s = start_time(12, 14)
    job = Job("nccl-transport-mismatch", "gpu-[201-204]", s, s + timedelta(minutes=48), "FAILED", "1:0",
              874950, seed=2024, user="eli")
    for i, node in enumerate(job.nodes):
        for dev in range(8):
            pid = 51000 + 100 * i + dev
            if node == "gpu-203":
                job.app(20 + dev * 0.01, f"{node}:{pid}:{pid} [{dev}] NCCL INFO NET/Plugin: Could not find: "
                                         "libnccl-net.so. Using internal net plugin.")
                job.app(20.5 + dev * 0.01, f"{node}:{pid}:{pid} [{dev}] NCCL INFO Using network Socket")
            else:
                job.app(20 + dev * 0.01, f"{node}:{pid}:{pid} [{dev}] NCCL INFO Plugin Path : "
                                         "/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so")
                job.app(20.5 + dev * 0.01, f"{node}:{pid}:{pid} [{dev}] NCCL INFO Using network IB")
    nccl_cascade(job, -1, 30)
    job.expected = {"outcome": "infrastructure", "sub_domain": "network", "root_cause": {"nodes": ["gpu-203"]}}
    return job


SCENARIOS = [s_xid149_nvlink, s_xid79, s_xid48, s_xid74, s_sxid, s_ib_link, s_nfs, s_enospc, s_kernel_panic,
             s_app_exception, s_cuda_oom, s_host_oom, s_timeout, s_preempted, s_cancelled, s_ambiguous,
             s_missing_logs, s_gsp, s_node_down_admin, s_gpu_lost_no_xid, s_nic_module_fault,
             s_hung_task_nfs, s_desync, s_time_limit_signal, s_exit_only, s_xid31_user_fault, s_lustre,
             s_ecc_in_output, s_node_failure_in_output, s_amd_hbm_uncorrectable, s_transport_mismatch]


if __name__ == "__main__":
    jobs = [make() for make in SCENARIOS]
    ids = [job.job_id for job in jobs]
    assert len(set(ids)) == len(ids), "two scenarios share a job id: the store keeps one of them"
    for job in jobs:
        write(job)
    print(f"wrote {len(SCENARIOS)} bundles to {OUT}")
