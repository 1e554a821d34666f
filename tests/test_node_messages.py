"""The kernel's own messages for network, storage, memory and CPU faults, one per line as the kernel
prints them (the message formats of the drivers and subsystems), each in a node's syslog during a job
whose output only says that a collective was aborted: the line alone must name the fault and the node."""

from __future__ import annotations

import pytest

from slurm_attr.analyze import analyze_bundle

ABORTED = "RuntimeError: NCCL communicator was aborted on rank 3.\n"

# (sub_domain, code, kernel message lines)
MESSAGES = [
    ("network", "NIC link down", ["mlx5_core 0000:08:00.7 ens9f0v5: Link down"]),
    ("network", "NIC link down", ["mlx5_core 0000:5e:00.0: Link is Down"]),
    ("network", "NIC link down", ["igb 0000:02:00.0 eno1: igb: eno1 NIC Link is Down"]),
    ("network", "NIC cable", ["mlx5_core 0000:3b:00.0: Port module event[error]: module 0, Cable error, High Temperature"]),
    ("network", "NIC cable", ["mlx5_core 0000:81:00.0: mlx5_port_module_event:1118:(pid 0): Port module event[error]: "
                              "module 0, Cable error, Bus stuck (I2C or data shorted)"]),
    ("network", "HCA failure", ["mlx5_core 0000:5e:00.0: synd 0x7: irisc not responding"]),
    ("network", "Bond member down", ["bond0: (slave eth1): link status definitely down, disabling slave"]),
    ("network", "Bond member down", ["bonding: bond0: link status definitely down for interface eth0, disabling it"]),
    ("network", "Bond down", ["bond0: (slave ens1f0): link status definitely down, disabling slave",
                              "bond0: now running without any active interface!"]),
    ("storage", "SMB timeout", ["CIFS: VFS: \\\\fs01 has not responded in 180 seconds. Reconnecting..."]),
    ("storage", "GlusterFS server timeout", ["E [client-protocol.c:437:client_ping_timer_expired] vol1: Server "
                                             "172.16.1.27:9900 has not responded in the last 60 seconds, disconnecting."]),
    ("storage", "Lustre", ["LNetError: 3210:0:(o2iblnd_cb.c:3410:kiblnd_check_conns()) Timed out RDMA with 10.1.0.5@o2ib (5): "
                           "c: 0, oc: 0, rc: 8"]),
    ("storage", "GPFS", ["mmfs: [N] File System gpfs1 unmounted by the system with return code 5 reason code 0"]),
    ("storage", "GPFS", ["[E] Unable to contact any quorum nodes during cluster probe."]),
    ("storage", "OrangeFS client", ["src/kernel/linux-2.6/pvfs2-utils.c Critical error: Invalid handle despite using "
                                    "iget4/iget5."]),
    ("storage", "OrangeFS client", ["pvfs2-client-core.c: Critical error: unable to connect to the servers."]),
    ("storage", "BeeGFS server unreachable", ["beegfs: 5E4A-6352A19E-gpu-02: Messaging (RPC): Communication error: "
                                              "Node: beegfs-storage bs01 [ID: 22001] (comm result: -110; message "
                                              "type: 2012)"]),
    ("storage", "BeeGFS server unreachable", ["beegfs: Messaging (RPC): Receive timed out from beegfs-meta meta01 [ID: 1] "
                                              "@ 10.0.0.5:8005"]),
    ("network", "HCA failure", ["mlx5_core 0000:08:01.0: wait_func:1203:(pid 435): ENABLE_HCA(0x104) timeout. Will "
                                "cause a leak of a command resource"]),
    ("network", "HCA failure", ["mlx5_core 0000:3b:00.0: device's health compromised - reached miss count"]),
    # the health recovery giving up, firmware that never comes up, an adapter too hot, a stalling one
    ("network", "HCA failure", ["mlx5_core 0000:3b:00.0: mlx5_health_try_recover:335:(pid 1234): Device in internal "
                                "error state, giving up"]),
    ("network", "HCA failure", ["mlx5_core 0000:3b:00.0: wait_fw_init:186:(pid 1234): Firmware over 120000 MS in "
                                "pre-initializing state, aborting"]),
    ("network", "HCA overheating", ["mlx5_core 0000:3b:00.0: print_health_info:424:(pid 0): Health issue observed, "
                                    "High temperature, severity(3) ERROR:"]),
    ("network", "HCA firmware stalled", ["mlx5_core 0000:3b:00.0: cmd_work_handler:877:(pid 1234): cmd[0]: "
                                         "CREATE_QP(0x500) No done completion"]),
    ("network", "NIC TX timeout", ["NETDEV WATCHDOG: ib0.beef (): transmit queue 26 timed out"]),
    ("network", "NIC TX timeout", ["ib1: transmit timeout: latency 1120 msecs"]),
    ("network", "NIC TX timeout", ["e1000e 0000:00:19.0 eth0: Detected Hardware Unit Hang:"]),
    ("network", "IB retry exceeded", ["infiniband mlx5_0: mlx5_handle_error_cqe:332:(pid 0): WC error: 12, Message: "
                                      "transport retry counter exceeded"]),
    ("storage", "NFS timeout", ["nfs: server 10.4.0.16 not responding, still trying"]),
    ("storage", "Lustre", ["Lustre: 3351:0:(client.c:2146:ptlrpc_expire_one_request()) @@@ Request sent has timed out "
                           "for slow reply: [sent 1700000000/real 1700000000]  req@ffff8 x1/t0(0) o4->scratch-OST0004-"
                           "osc-ffff8@10.0.0.5@o2ib:6/4 lens 488/448 e 0 to 1 dl 1700000007 ref 2 fl Rpc:X/0/ffffffff "
                           "rc 0/-1"]),
    ("storage", "NFS locks lost", ["NFS: nfs4_reclaim_open_state: Lock reclaim failed!"]),
    ("host", "Fabric Manager cannot start", ['Kernel module "ib_umad" has not been loaded, fabric manager cannot be '
                                             'started']),
    ("host", "Fabric Manager cannot start", ["nvlsm: ibwarn: [15] umad_init: can't read ABI version from "
                                             "/sys/class/infiniband_mad/abi_version (No such file or directory): is "
                                             "ib_umad module loaded?"]),
    ("network", "NIC link down", ["ice 0000:af:00.0 ens1f0: NIC Link is Down"]),
    # Omni-Path's hfi1 naming its unit, its link firmware gone quiet; AWS ENA missing its keep-alive
    ("network", "NIC link down", ["hfi1 0000:81:00.0: hfi1_0: 8051: Link down"]),
    ("network", "NIC link down", ["hfi1 0000:81:00.0: hfi1_0: Lost 8051 heartbeat"]),
    ("network", "NIC TX timeout", ["ena 0000:00:05.0 eth0: Keep alive watchdog timeout."]),
    # block layer and local file systems in today's wordings; an NVMe drive the driver gave up on
    ("storage", "I/O error", ["Buffer I/O error on device sda3, logical block 1234"]),
    ("storage", "I/O error", ["EXT4-fs (sda3): I/O error while writing superblock"]),
    ("storage", "I/O error", ["Aborting journal on device sda3-8."]),
    ("storage", "I/O error", ['XFS (sdb1): Metadata I/O Error (0x1) detected at xfs_trans_read_buf_map+0x2a2/0x300 '
                              '[xfs] (fs/xfs/xfs_trans_buf.c:296).  Shutting down filesystem.']),
    ("storage", "I/O error", ["nvme nvme0: Removing after probe failure status: -19"]),
    ("storage", "I/O error", ["nvme nvme0: Device not ready; aborting reset, CSTS=0x1"]),
    ("storage", "NFS locks lost", ["NFSv4: state recovery failed for open file data/ckpt.pt, error = -5"]),
    # the driver's own checks failing with an NVLink fabric status
    ("nvlink", "NVLink fabric status", ["NVRM: nvCheckOkFailedNoLog: Check failed: NVLink fabric state cached by the "
                                        "driver is out of sync [NV_ERR_FABRIC_STATE_OUT_OF_SYNC] (0x00000087) returned "
                                        "from status @ mem_multicast_fabric.c:2917"]),
    ("nvlink", "NVLink fabric status", ["NVRM: nvAssertOkFailedNoLog: Assertion failed: Nvlink Training Error "
                                        "[NV_ERR_NVLINK_TRAINING_ERROR] (0x00000077) returned from status @ "
                                        "knvlink.c:1234"]),
    # the CephFS client evicted by its MDS, or the cluster full
    ("storage", "CephFS failure", ["ceph: mds0 closed our session"]),
    ("storage", "CephFS failure", ["ceph: mds0 session blocklisted"]),
    ("storage", "CephFS failure", ["libceph: cluster is full (osdmap FULL)"]),
    ("storage", "CephFS", ["libceph: tid 8812 on osd14 timeout"]),
    # the JuiceFS client unable to read a chunk back from its object store
    ("storage", "JuiceFS read failed", ["juicefs[781630] <WARNING>: fail to read sliceId 15898540 (off:0, size:4096, "
                                        "clen: 5711): timeout after 1m0s [reader.go:799]"]),
    ("gpu", "AMD GPU reset failed", ["amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!",
                                     "amdgpu 0000:c1:00.0: amdgpu: GPU reset(2) failed"]),
    ("gpu", "AMD GPU reset failed", ["amdgpu 0000:c1:00.0: amdgpu: GPU Recovery Failed: -110"]),
    ("gpu", "GPU init failure", ["amdgpu 0000:c1:00.0: amdgpu: Fatal error during GPU init"]),
    ("gpu", "Intel GPU hang", ["i915 0000:3a:00.0: [drm] GPU HANG: ecode 12:1:85dffffb, in python [12345]"]),
    ("host", "Hardware protection shutdown", ["acpitz: critical temperature reached, shutting down",
                                              "reboot: HARDWARE PROTECTION shutdown (Temperature too high)"]),
    ("host", "Hardware NMI", ["Uhhuh. NMI received for unknown reason 3d on CPU 12."]),
    ("host", "Hardware NMI", ["NMI: PCI system error (SERR) for reason b1 on CPU 0."]),
    ("network", "NIC firmware failure", ["bnxt_en 0000:41:00.0 eth0: Detected firmware fatal condition, initiating "
                                         "reset"]),
    ("network", "NIC lost from the bus", ["igb 0000:05:00.0: PCIe link lost"]),
    ("host", "Kernel network table full", ["nf_conntrack: nf_conntrack: table full, dropping packet"]),
    ("network", "IPoIB multicast join failed", ["ib0: multicast join failed for ff12:401b:ffff:0000:0000:0000:ffff:ffff, "
                                                "status -22"]),
    ("storage", "iSCSI connection error", ["connection1:0: detected conn error (1020)"]),
    ("storage", "I/O error", ["critical medium error, dev sdb, sector 123456 op 0x0:(READ) flags 0x0 phys_seg 1 prio "
                              "class 0"]),
    ("storage", "I/O error", ["sd 2:0:0:0: rejecting I/O to offline device"]),
    ("host", "Kernel network table full", ["neighbour: arp_cache: neighbor table overflow!"]),
    ("host", "Process limit reached", ["cgroup: fork rejected by pids controller in /system.slice/slurmstepd.scope/"
                                       "job_4242/step_0"]),
    ("gpu", "XID 79", ["nvidia 0000:41:00.0: Unable to change power state from D3cold to D0, device inaccessible"]),
    ("storage", "NFS timeout", ["lockd: server nfs01 not responding, still trying"]),
    ("gpu", "Intel GPU reset failed", ["i915 0000:3a:00.0: [drm] GPU HANG: ecode 12:1:85dffffb, in python [12345]",
                                       "i915 0000:3a:00.0: [drm] *ERROR* Failed to reset chip"]),
    ("gpu_memory", "AMD GPU UMC uncorrectable", ["amdgpu 0000:c1:00.0: amdgpu: socket: 0, die: 0, 1 new uncorrectable "
                                                 "hardware errors detected in umc block"]),
    ("gpu", "AMD GPU uncorrectable", ["amdgpu 0000:c1:00.0: amdgpu: socket: 0, die: 0, 2 new uncorrectable hardware "
                                      "errors detected in gfx block"]),
    ("application", "AMD GPU page fault", ["amdgpu 0000:c1:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:3 "
                                           "pasid:32777, for process python pid 1234 thread python pid 1234)"]),
    ("application", "AMD GPU page fault", ["amdgpu 0000:c1:00.0: amdgpu: [gfxhub0] no-retry page fault (src_id:0 "
                                           "ring:24 vmid:3 pasid:32777, for process python pid 1234 thread python pid "
                                           "1234)"]),
    # in VM 0, the driver's own: no process of the job faulted (older kernels' `VMC page fault`)
    ("gpu", "AMD GPU page fault (no process)", ["amdgpu 0000:03:00.0: [mmhub] VMC page fault (src_id:0 ring:157 vmid:0 "
                                                "pasid:0)"]),
    ("host", "Host hardware error", ["mce: [Hardware Error]: CPU 12: Machine Check Exception: 5 Bank 4: be00000000800400"]),
    ("network", "No InfiniBand adapter", ["Fatal error:  device '*': sys files not found "
                                          "(/sys/class/infiniband/*/ports)"]),
    ("gpu", "GSP not responding", ["NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:1b:00 (printing 1 of "
                                   "every 30).  The GPU likely needs to be reset."]),
    ("storage", "Lustre", ["LustreError: 11-0: lustre1-MDT0000-mdc-ffff8a7c4f4c1000: operation obd_ping to node "
                           "10.1.1.1@o2ib failed: rc = -107"]),
    ("storage", "Lustre", ["LNet: 1234:0:(o2iblnd_cb.c:3416:kiblnd_check_conns()) Timed out tx for 10.1.1.1@o2ib: "
                           "4 seconds"]),
    ("storage", "GPFS", ["mmfs: [E] Node 10.0.0.5 (gpu-02) lease renewal is overdue. Pinging to check if it is alive"]),
    ("storage", "GPFS", ["mmfs: [N] Node 10.0.0.2 (gpu-02) is being expelled because of an expired lease."]),
    ("storage", "I/O error", ["md/raid0:md0: Disk failure on nvme0n1p1 detected, failing array."]),
    ("storage", "I/O error", ["EXT4-fs (md0): Remounting filesystem read-only"]),
    ("storage", "I/O error", ["EXT4-fs error (device sda1): ext4_find_entry:1455: inode #2: comm python: reading "
                              "directory lblock 0"]),
    ("storage", "I/O error", ["XFS (sdb1): metadata I/O error in \"xfs_buf_iodone_callback_error\" at daddr 0x1 len 8 "
                              "error 5"]),
    ("storage", "I/O error", ["XFS (dm-0): Log I/O Error Detected. Shutting down filesystem"]),
    ("storage", "I/O error", ["nvme nvme4: Disabling device after reset failure: -19"]),
    ("storage", "I/O error", ["I/O error, dev nvme0n1, sector 12 op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 0"]),
    ("storage", "NVMe timeout", ["nvme nvme4: I/O tag 22 (2016) opcode 0x2 (Admin Cmd) QID 0 timeout, reset controller"]),
    ("storage", "NVMe timeout", ["nvme nvme0: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff"]),
    ("storage", "NFS hang", ["INFO: task python:280058 blocked for more than 120 seconds.",
                             "      Tainted: P           OE     5.15.0-91-generic #101",
                             "task:python state:D stack:0 pid:280058 ppid:1 flags:0x00004002",
                             "Call Trace:", " <TASK>", " __schedule+0x2c0/0x6e0",
                             " rpc_wait_bit_killable+0x1e/0xa0 [sunrpc]", " nfs_wb_all+0x3d/0x140 [nfs]"]),
    # a local file system's code under the blocked task, and an older kernel's raw stack words before the trace
    ("storage", "ZFS hang", ["INFO: task nfsd:3782 blocked for more than 120 seconds.",
                             "\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.",
                             "nfsd            D ffff88013fc127c0     0  3782      2 0x00000000",
                             " ffff88012e5997c0 0000000000000046 0000000000000000 ffffffff8160d020",
                             "Call Trace:", " [<ffffffff8135077c>] ? __mutex_lock_common.isra.5+0xff/0x164",
                             " [<ffffffffa03745c0>] ? zfsctl_lookup_objset+0x29/0x288 [zfs]"]),
    ("storage", "XFS hang", ["INFO: task kworker/u97:2:1234 blocked for more than 122 seconds.",
                             "task:kworker/u97:2 state:D stack:0 pid:1234 ppid:2 flags:0x00004000", "Call Trace:",
                             " <TASK>", " __schedule+0x2c0/0x6e0", " xlog_grant_head_wait+0xbd/0x200 [xfs]",
                             " xfs_log_reserve+0xc2/0x1c0 [xfs]"]),
    ("host_oom", "OOM kill", ["Memory cgroup out of memory: Killed process 12345 (python) total-vm:1234kB, "
                              "anon-rss:1234kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:2048kB oom_score_adj:0"]),
    ("host", "Host memory UE", ["mce: Uncorrected hardware memory error in user-access at 3f8c2a000",
                                "Memory failure: 0x3f8c2a: Sending SIGBUS to python:1234 due to hardware memory "
                                "corruption"]),
    ("host", "Host hardware error", ["{1}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 0",
                                     "{1}[Hardware Error]: event severity: fatal"]),
    ("host", "Host hardware error", ["[Hardware Error]: Uncorrected, software restartable error."]),
    ("host", "PCIe fatal", ["pcieport 0000:00:03.0: AER: Uncorrected (Fatal) error received: 0000:03:00.0"]),
    ("host", "PCIe fatal", ["pcieport 0000:3a:00.0: DPC: containment event, status:0x1f01 source:0x0000"]),
    ("host", "PCIe fatal", ["pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0"]),
    # kernels before 4.x (RHEL 7) choose the victim on one line and report the kill on the next
    ("host_oom", "OOM kill", ["Out of memory: Kill process 12345 (python) score 954 or sacrifice child",
                              "Killed process 12345 (python) total-vm:1234kB, anon-rss:1234kB, file-rss:0kB"]),
    ("host_oom", "OOM kill", ["Killed process 12345 (python) total-vm:1234kB, anon-rss:1234kB, file-rss:0kB"]),
    ("host", "PCIe fatal", ["pcieport 0000:3a:00.0: AER: device recovery failed"]),
    ("host", "CPU lockup", ["watchdog: BUG: soft lockup - CPU#18 stuck for 27s! [python3:2254956]"]),
    ("host", "CPU lockup", ["rcu: INFO: rcu_sched self-detected stall on CPU"]),
    ("host", "Kernel panic", ["Kernel panic - not syncing: Fatal exception"]),
    # a daemon on the node failing a write: one of the node's file systems is full
    ("storage", "Node disk full", ["systemd-journald[512]: Failed to write entry (23 items, 705 bytes), ignoring: No "
                                   "space left on device"]),
    # the GPU's firmware scheduler no longer answering, and the reset that follows
    ("gpu", "AMD GPU firmware hang", ["amdgpu 0000:c5:00.0: amdgpu: MES failed to respond to msg=REMOVE_QUEUE",
                                      "amdgpu 0000:c5:00.0: amdgpu: failed to remove hardware queue from MES, "
                                      "doorbell=0x1802",
                                      "amdgpu 0000:c5:00.0: amdgpu: MES might be in unrecoverable state, issue a GPU "
                                      "reset", "amdgpu 0000:c5:00.0: amdgpu: GPU reset begin!. Source:  3"]),
    ("host", "NVIDIA driver version mismatch", ["NVRM: API mismatch: the client has the version 535.54.03, but",
                                                "NVRM: this kernel module has the version 530.30.02.  Please"]),
    ("gpu", "Kernel oops in nvidia", ["BUG: kernel NULL pointer dereference, address: 0000000000000030",
                                      "#PF: supervisor read access in kernel mode",
                                      "Oops: 0000 [#1] SMP NOPTI",
                                      "CPU: 0 PID: 28651 Comm: python3 Tainted: G           O       6.8.0 #1",
                                      "RIP: 0010:nvidia_vma_access+0x1b/0x350 [nvidia]"]),
    ("network", "Kernel oops in mlx5_core", ["general protection fault, probably for non-canonical address "
                                             "0xdead000000000122: 0000 [#1] SMP NOPTI",
                                             "RIP: 0010:mlx5_cmd_comp_handler+0x1a2/0x4e0 [mlx5_core]"]),
    # the fault in a core-kernel helper the driver called with state it had broken
    ("gpu", "Kernel oops in amdgpu", ["BUG: kernel NULL pointer dereference, address: 0000000000000000",
                                      "Oops: 0000 [#1] SMP NOPTI",
                                      "RIP: 0010:ida_free+0xc2/0x140",
                                      "RSP: 0018:ffffc90023a6bbe0 EFLAGS: 00010046",
                                      "Call Trace:", " <TASK>",
                                      " amdgpu_pasid_free_delayed+0x116/0x1f0 [amdgpu]",
                                      " amdgpu_driver_postclose_kms+0x2da/0x330 [amdgpu]",
                                      " drm_release+0x69/0xe0 [drm]"]),
    ("storage", "Kernel oops in osc", ["BUG: unable to handle page fault for address: ffffa0b3c0000008",
                                       "RIP: 0010:osc_extent_find+0x6e/0x900 [osc]"]),
    ("host", "Kernel oops", ["BUG: kernel NULL pointer dereference, address: 0000000000000008",
                             "RIP: 0010:__list_del_entry_valid+0x25/0x90"]),
    ("gpu", "GPU driver hang", ["INFO: task python:280058 blocked for more than 120 seconds.",
                                "task:python state:D stack:0 pid:280058 ppid:1 flags:0x00004002", "Call Trace:",
                                " <TASK>", " __schedule+0x2c0/0x6e0", " uvm_spin_loop+0x1e/0xa0 [nvidia_uvm]",
                                " uvm_tracker_wait+0x3d/0x140 [nvidia_uvm]"]),
    ("network", "network adapter driver hang", ["INFO: task python:280058 blocked for more than 120 seconds.",
                                                "Call Trace:", " __schedule+0x2c0/0x6e0",
                                                " mlx5_cmd_exec+0x1e/0xa0 [mlx5_core]",
                                                " ib_destroy_qp_user+0x3d/0x140 [ib_core]"]),
    ("network", "HCA failure", ["mlx5_core 0000:3b:00.0: mlx5_fw_fatal_reporter_err_work:700:(pid 1234): Driver is "
                                "in error state. Unloading"]),
    ("host_oom", "OOM (nothing to kill)", ["Out of memory and no killable processes..."]),
    ("gpu", "GPU lost", ["Pod Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc "
                         "error: code = Unknown desc = error getting list of preferred allocation devices: unable to "
                         "retrieve list of available devices: error creating nvml.Device 0: nvml: Unknown Error, "
                         "which is unexpected"]),
    ("nvlink", "Fabric Manager version mismatch", [
        "fabric manager NVIDIA GPU driver interface version 590.48.01 don't match with driver version 580.126.09."]),
    ("storage", "Mount failed", ["mount.lustre: mount 10.0.0.5@o2ib:/scratch at /scratch failed: Device or resource busy"]),
    ("storage", "Mount failed", ["mount.nfs: access denied by server while mounting nfs01:/home"]),
    ("storage", "CephFS", ["libceph: mon0 (1)10.72.36.245:40083 session lost, hunting for new mon"]),
    ("gpu", "GPU power cables", ["NVRM: GPU 0000:3b:00.0: GPU does not have the necessary power cables connected."]),
    ("host", "IOMMU DMA fault", ["nvidia 0000:07:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0003 "
                                 "address=0x80000040 flags=0x0020]"]),
    ("network", "HCA failure", ["mlx5_core 0000:3b:00.0: poll_health:800:(pid 0): Fatal error 1 detected"]),
    ("host", "IOMMU DMA fault", ["DMAR: DRHD: handling fault status reg 502",
                                 "DMAR: [DMA Write] Request device [02:00.0] fault addr cd139000 [fault reason 05] "
                                 "PTE Write access is not set"]),
]


def _syslog(lines: list[str]) -> str:
    return "".join(f"Nov 20 10:30:{i:02d} gpu-02 kernel: {line}\n" for i, line in enumerate(lines))


@pytest.mark.parametrize(("sub_domain", "code", "lines"), MESSAGES, ids=[f"{m[1]}:{m[2][-1][:40]}" for m in MESSAGES])
def test_a_kernel_message_names_the_fault_and_its_node(make_bundle, sub_domain, code, lines):
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": _syslog(lines), "app/out.log": ABORTED}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (sub_domain, code, ["gpu-02"])
    assert ".." not in d["root_cause"]["explanation"].replace("...", "")


@pytest.mark.parametrize("line", [
    "mce: [Hardware Error]: Machine check events logged",           # corrected: logged, not fatal
    "{1}[Hardware Error]: event severity: corrected",
    "{1}[Hardware Error]: event severity: recoverable",
    "nvme nvme0: Shutdown timeout set to 10 seconds",
    "XFS (sda1): Mounting V5 Filesystem",
    "bond0: (slave eth1): link status definitely up, 25000 Mbps full duplex",
    "amdgpu 0000:c1:00.0: amdgpu: GPU reset(2) succeeded!",
    "mlx5_core 0000:81:00.0: mlx5_port_module_event:1106:(pid 0): Port module event: module 0, Cable plugged",
    "EXT4-fs (sda1): mounted filesystem with ordered data mode. Opts: (null)",
    # a CPU slowed for heat is throttled, not failed
    "CPU12: Package temperature above threshold, cpu clock throttled (total events = 1)",
    # a client retrying says nothing failed yet
    "beegfs: Messaging (RPC node): Retrying communication with node: beegfs-storage bs01 [ID: 22001]",
    # a fabric probe still running is retried by its caller; other statuses are the driver's own
    "NVRM: nvCheckOkFailedNoLog: Check failed: Nvlink Fabric Status or Fabric Probe is not yet complete, caller "
    "needs to retry [NV_ERR_NVLINK_FABRIC_NOT_READY] (0x00000081) returned from status @ gpu_fabric_probe.c:101",
    "NVRM: nvAssertOkFailedNoLog: Assertion failed: Invalid argument to call [NV_ERR_INVALID_ARGUMENT] (0x0000001F) "
    "returned from status @ kern_mem.c:88",
    # a daemon of a node kept off the internet failing to resolve a public name, as it does all day
    "snapd[812]: cannot refresh: Get \"https://api.snapcraft.io/v2/snaps/refresh\": dial tcp: lookup api.snapcraft.io "
    "on 127.0.0.53:53: no such host",
    # ENOSPC that is no disk's: inotify out of watches
    "systemd[1]: Failed to add inotify watch on /etc/localtime: No space left on device",
    # a warning's backtrace names a module too, but nothing died
    "WARNING: CPU: 3 PID: 812 at /var/lib/dkms/nvidia/nv.c:1234 nv_foo+0x10/0x20 [nvidia]\n"
    "RIP: 0010:nv_foo+0x10/0x20 [nvidia]",
])
def test_routine_and_corrected_messages_name_no_fault(make_bundle, line):
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": _syslog(line.split("\n")), "app/out.log": ABORTED}))
    assert (d["sub_domain"], d["root_cause"]) == ("unknown", None)


@pytest.mark.parametrize(("event", "fault"), [
    ("Memory #0x87 | Uncorrectable ECC (DIMM A1) | Asserted", True),
    ("Power Supply #0x51 | Failure detected | Asserted", True),
    ("Processor #0x04 | IERR | Asserted", True),
    ("Critical Interrupt #0x1b | PCI PERR | Asserted", True),
    ("Memory #0x87 | Correctable ECC | Asserted", False),           # corrected: not a fault
    ("Power Supply #0x51 | Failure detected | Deasserted", False),  # the fault clearing
])
def test_the_bmcs_event_log_names_a_failed_part_during_the_job(make_bundle, event, fault):
    sel = f"  1a | 11/20/2026 | 10:30:00 | {event}\n"
    d = analyze_bundle(make_bundle({"nodes/gpu-02/sel.txt": sel}, exit_code="0:9"))
    got = (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"])
    assert (got == ("host", "BMC hardware event", ["gpu-02"])) is fault
    # the same record a day before the job started is only context
    earlier = analyze_bundle(make_bundle({"nodes/gpu-02/sel.txt": sel.replace("11/20/2026", "11/19/2026")},
                                         exit_code="0:9"))
    assert earlier["root_cause"]["code"] != "BMC hardware event"


@pytest.mark.parametrize(("line", "died"), [
    ("slurmd.service: Main process exited, code=killed, status=9/KILL", True),
    ("munge.service: Failed with result 'oom-kill'.", True),
    ("slurmd.service: Main process exited, code=killed, status=15/TERM", False),   # a stop or restart
    # other batch systems' node daemons: Flux's broker, Torque's MOM, Grid Engine's execd
    ("flux.service: Main process exited, code=killed, status=6/ABRT", True),
    ("pbs_mom.service: Failed with result 'core-dump'.", True),
    ("sgeexecd.default.service: Main process exited, code=dumped, status=11/SEGV", True),
    ("influxdb.service: Main process exited, code=killed, status=6/ABRT", False),   # not a batch daemon
])
def test_systemd_saying_a_daemon_the_node_runs_jobs_with_died_names_the_node(make_bundle, line, died):
    log = f"Nov 20 10:30:00 gpu-02 systemd[1]: {line}\n"
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": log, "app/out.log": ABORTED}))
    if died:
        assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
            "host", "Node daemon died", ["gpu-02"])
    else:
        assert d["root_cause"] is None

@pytest.mark.parametrize("line", [
    "jenkins.service: A process of this unit has been killed by the OOM killer.",
    "session-4.scope: Failed with result 'oom-kill'.",
])
def test_systemd_saying_the_oom_killer_took_a_process_of_a_unit_is_the_nodes_memory(make_bundle, line):
    log = f"Nov 20 10:30:00 gpu-02 systemd[1]: {line}\n"
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": log, "app/out.log": "Terminated\n"}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == ("host_oom", "OOM killer", ["gpu-02"])



AMDGPU_TRACE = [  # an excerpt that starts below the oops or warning header
    "Hardware name: HPE HPE_CRAY_EX235A/HPE CRAY EX235A, BIOS 2.1.0 01-23-2025",
    "Workqueue: events svm_range_evict_svm_bo_worker [amdgpu]",
    "RIP: 0010:svm_range_evict_svm_bo_worker+0x313/0x330 [amdgpu]",
    "RSP: 0018:ffffb74311317e40 EFLAGS: 00010286",
]


def test_a_driver_backtrace_without_an_oops_is_kept_as_context_of_its_device(make_bundle):
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": _syslog(AMDGPU_TRACE), "app/out.log": ABORTED}))
    trace = next(s for s in d["symptoms"] if s["code"] == "Kernel trace in amdgpu")
    assert trace["role"] == "context" and d["root_cause"] is None  # nothing is known to have died


def test_a_part_failing_on_the_node_slurm_then_lost_is_why_it_was_lost(make_bundle):
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": _syslog(AMDGPU_TRACE)},
                                   state="NODE_FAIL", exit_code="0:0", failed_node="gpu-02"))
    assert (d["sub_domain"], d["evidence_status"], d["root_cause"]["nodes"]) == ("gpu", "supported", ["gpu-02"])
    assert "then lost the node" in d["verdict"]
    lost = next(s for s in d["symptoms"] if s["kind"] == "scheduler_state")
    assert lost["demoted_by"] == "lost_node_after"
    # the same trace on another node than the one Slurm lost says nothing of why it was lost
    d = analyze_bundle(make_bundle({"nodes/gpu-01/syslog": _syslog(AMDGPU_TRACE).replace("gpu-02", "gpu-01")},
                                   state="NODE_FAIL", exit_code="0:0", failed_node="gpu-02"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "NODE_FAIL")


@pytest.mark.parametrize("module", ["amdgpu", "nvidia"])  # the oops rule's frame, and the hung-task rule's
def test_a_driver_frame_the_unwinder_only_guessed_does_not_take_the_oops(make_bundle, module):
    lines = ["BUG: kernel NULL pointer dereference, address: 0000000000000000", "Oops: 0000 [#1] SMP NOPTI",
             "RIP: 0010:ida_free+0xc2/0x140", "Call Trace:", " <TASK>",
             f" ? drv_pasid_free_delayed+0x116/0x1f0 [{module}]", " __fput+0x8a/0x240"]
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": _syslog(lines), "app/out.log": ABORTED}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "Kernel oops")


@pytest.mark.parametrize(("module", "sub_domain"), [("nvidia", "gpu"), ("nvidia_uvm", "gpu"), ("mlx5_core", "network")])
def test_an_oops_in_the_core_kernel_called_from_a_driver_is_that_drivers(make_bundle, module, sub_domain):
    lines = ["BUG: kernel NULL pointer dereference, address: 0000000000000000", "Oops: 0000 [#1] SMP NOPTI",
             "RIP: 0010:ida_free+0xc2/0x140", "RSP: 0018:ffffc90023a6bbe0 EFLAGS: 00010046", "Call Trace:",
             " <TASK>", f" drv_free_delayed+0x116/0x1f0 [{module}]", " __fput+0x8a/0x240"]
    d = analyze_bundle(make_bundle({"nodes/gpu-02/syslog": _syslog(lines), "app/out.log": ABORTED}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == (sub_domain, f"Kernel oops in {module}")
    core = next(s for s in d["symptoms"] if s["code"] == "Kernel oops")
    assert core["demoted_by"] == "companion_events"  # kept, as the same fault
