"""Errors CUDA, NCCL and the job's own tools write into its output, in the formats those programs
print them (the CUDA runtime's error strings as NCCL, ggml and shells quote them), each alone in a
bundle: the line must name the cause, and where it says one, the node."""

from __future__ import annotations

import pytest

from slurm_attr.analyze import analyze_bundle

# (output, sub_domain, root cause code)
MESSAGES = [
    # ggml (llama.cpp, ollama): no space after `CUDA error:`, and its own start-up failure
    ('{"error":{"message":"timed out waiting for llama runner to start:CUDA error:uncorrectable ECC error '
     'encountered\\n current device:0"}}', "gpu_memory", "CUDA ECC uncorrectable"),
    ("ggml_cuda_init: failed to initialize CUDA: system not yet initialized", "nvlink", "CUDA system not ready"),
    # NCCL quoting a CUDA runtime text its own table has no class for
    ("gpu-02:2871:2871 [0] misc/cudawrap.cc:182 NCCL WARN Cuda failure 'CUDA driver version is insufficient "
     "for CUDA runtime version'", "application", "CUDA build mismatch"),
    ("gpu-02:50555:50555 [0] NCCL WARN Cuda failure 'named symbol not found'", "application", "CUDA build mismatch"),
    ("RuntimeError: CUDA error: device kernel image is invalid", "application", "CUDA build mismatch"),
    # the receiving rank posted another size than its peer sent
    ("gpu-02:1307367:1307586 [0] transport/net_ib.cc:1038 NCCL WARN NET/IB : req 0/1 tag 0 peer 10.10.23.6<58683> "
     "collective mismatch error, local size 496640 remote size 65536", "application", "NCCL size mismatch"),
    # check macros printing the error's name, then its text after a comma; alpaka quoting both
    ("Unexpected Device Error /src/module_psi/kernels/rocm/memory_op.hip.cu:48: hipErrorOutOfMemory, out of memory",
     "gpu_oom", "CUDA error (out of memory)"),
    ("alpaka/event/EventCudaRt.hpp(195) 'ret = cudaEventQuery( event.m_spEventImpl->m_CudaEvent)' returned error  : "
     "'cudaErrorIllegalAddress': 'an illegal memory access was encountered'!", "application",
     "CUDA error (an illegal memory access was encountered)"),
    # the display watchdog (702) kills only kernels on a GPU that drives a display
    ("alpaka/event/EventCudaRt.hpp(195) 'ret = cudaEventQuery( event.m_spEventImpl->m_CudaEvent)' returned error  : "
     "'cudaErrorLaunchTimeout': 'the launch timed out and was terminated'!", "host", "Display watchdog"),
    ("RuntimeError: CUDA error: the launch timed out and was terminated", "host", "Display watchdog"),
    # nvidia-smi in the job seeing none of the node's GPUs
    ("No devices were found", "host", "No GPU visible"),
    # older NCCL retrying a connect that timed out
    ("gpu-02:1234:1300 [0] NCCL WARN Call to connect returned Connection timed out, retrying", "network",
     "NCCL socket timeout"),
    # a login session's runtime directory that batch jobs on the node never get
    ("mkdir: cannot create directory \u2018/run/user/140196\u2019: Permission denied", "host",
     "User runtime directory missing"),
    ("Error: mkdir /run/user/1000: permission denied", "host", "User runtime directory missing"),
    # the tmpfs every user shares refusing a name (not mode 1777, or another user's leftover)
    ("mktemp: failed to create directory via template `/dev/shm/nxf.XXXXXXXXXX': Permission denied", "host",
     "/dev/shm not writable"),
    ("[1763634600.123456] [gpu-02:1234:0]     mm_posix.c:195  UCX  ERROR open(file_name=/dev/shm/ucx_shm_posix_1234 "
     "flags=0x2c2) failed: Permission denied", "host", "/dev/shm not writable"),
    # NCCL quoting a CUDA call's rejected value, with the number newer NCCL prints before the text
    ("[1] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'", "application", "CUDA invalid argument"),
    ("RuntimeError: CUDA error: invalid argument", "application", "CUDA invalid argument"),
    ("hipErrorInvalidValue: invalid argument", "application", "CUDA invalid argument"),
    # Ray's raylet finding the disk of its session directory full, and the error it warned of
    ("(raylet) [2026-11-20 10:22:29,122 E 47346 47378] file_system_monitor.cc:116: /tmp/ray/session_2026-11-20_10-00-59"
     "_061012_46959 is over 95% full, available space: 1.09616 GB; capacity: 1984.68 GB. Object creation will fail "
     "if spilling is required.", "storage", "Ray local disk full"),
    ("ray.exceptions.OutOfDiskError: Local disk is full. The object cannot be created because the local object store "
     "is full and the local disk's utilization is over capacity (95% by default).", "storage", "Ray local disk full"),
    # a program's own reading of its worker's death (Flye)
    ("\troot: ERROR: Looks like the system ran out of memory", "host_oom", "Program says out of memory"),
    # MPICH's Hydra losing PBS's task manager under it (TM_ENOTCONNECTED)
    ("[mpiexec@h020] HYDT_bscd_pbs_wait_for_completion (tools/bootstrap/external/pbs_wait.c:67): tm_poll(obit_event) "
     "failed with TM error 17002", "host", "MPI launcher lost the batch system"),
    # Ubuntu's linux-tools wrapper finding no build for the kernel the node booted
    ("WARNING: cpupower not found for kernel 4.15.0-42", "host", "Kernel tools missing"),
    ("WARNING: perf not found for kernel 5.15.0-91", "host", "Kernel tools missing"),
    # PyTorch's own check of the driver before CUDA starts
    ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
     "driver from http://www.nvidia.com/Download/index.aspx", "host", "No GPU visible"),
    ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver "
     "by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx", "application",
     "CUDA build mismatch"),
    # a multi-node NVLink domain NCCL cannot use: its warning and its INFO hint
    ("gpu-02:1234:1300 [0] init.cc:1706 NCCL WARN MNNVL (cliqueSize 72) is available but not working on this "
     "system. Check the IMEX configuration (nvidia-imex-ctl -N). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.",
     "nvlink", "NVLink domain unusable (IMEX)"),
    ("gpu-02:1234:1300 [0] NCCL INFO HINT: In many cases this error indicates that the IMEX (NVLink fabric) service "
     "is not running or is misconfigured on MNNVL systems.", "nvlink", "NVLink domain unusable (IMEX)"),
    # NCCL's IB resiliency layer (2.28+): failed completions without the peer, adapters it gave up on,
    # a link renegotiating its speed, a RoCE address table changing under the job
    ("gpu-02:1234:1300 [0] transport/net_ib.cc:1710 NCCL WARN NET/IB: mlx5_0: Got completion with error (devIndex=0, "
     "wc->status=(IBV_WC_REM_ACCESS_ERR)10, wc->opcode=(IBV_WC_RDMA_WRITE)1, wc->wr_id=12, wc->qp_num=4411, "
     "wc->byte_len=0)", "network", "NCCL IB completion error"),
    ("gpu-02:1234:1300 [0] transport/net_ib.cc:1710 NCCL WARN NET/IB: mlx5_0: Got completion with error (devIndex=0, "
     "wc->status=(IBV_WC_RETRY_EXC_ERR)12, wc->opcode=(IBV_WC_SEND)0, wc->wr_id=12, wc->qp_num=4411, wc->byte_len=0)",
     "network", "NCCL IB retry exceeded"),
    ("gpu-02:1234:1300 [0] transport/net_ib.cc:2210 NCCL WARN NET/IB: mlx5_2: Marking device 1 as permanently failed "
     "(mlx5_2 comm=0x7f3c2c001230)", "network", "NCCL IB device failed"),
    ("gpu-02:1234:1300 [0] transport/net_ib.cc:610 NCCL WARN NET/IB : mlx5_0:1 speed change detected: 400000 -> "
     "200000 Mbps", "network", "NCCL IB link speed changed"),
    ("gpu-02:1234:1300 [0] transport/net_ib.cc:640 NCCL WARN NET/IB: mlx5_0: GID table changed on mlx5_0:1",
     "network", "NCCL RoCE GID changed"),
    # NVML refusing a GPU for its own state, and its text for a driver upgraded without a reboot
    ("pynvml.NVMLError_ResetRequired: GPU requires restart", "gpu", "GPU unusable (NVML)"),
    ("Unable to determine the device handle for GPU0000:3B:00.0: Insufficient External Power", "gpu",
     "GPU unusable (NVML)"),
    ("pynvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.", "host",
     "NVIDIA driver version mismatch"),
    # the node's MPS daemon refusing the process
    ("RuntimeError: CUDA error: MPS client failed to connect to the MPS control daemon or the MPS server", "host",
     "CUDA MPS failure"),
    # Open MPI's help texts for a daemon it cannot reach or lost, Omni-Path's PSM2, a libfabric call
    ("ORTE is unable to establish a communication connection to the\nspecified daemon located on the indicated "
     "node:\n\n  my node:   gpu-01\n  target node:  gpu-02\n", "network", "MPI daemon unreachable"),
    ("mpirun has detected that a required daemon terminated during execution\nof the application with a non-zero "
     "status. This is a fatal error.", "host", "MPI daemon died"),
    ("PSM2 was unable to open an endpoint. Please make sure that the network link is\nactive on the node and the "
     "hardware is functioning.\n\n  Error: Failure in initializing endpoint", "network", "PSM2 fabric error"),
    ("gpu-02.12345Error Other error occurred in attempting to make network progress (psm2_mq_ipeek).", "network",
     "PSM2 fabric error"),
    ("Open MPI failed an OFI Libfabric library call (fi_domain).  This is highly\nunusual; your job may behave "
     "unpredictably (and/or abort) after this.\n\n  Local host: gpu-02\n  Location: mtl_ofi_component.c:629\n"
     "  Error: No data available (61)", "network", "MPI libfabric call failed"),
    # UCX relaying an adapter's error event, and its mlx5 transports' failed completions
    ("[1643025432.789437] [gpu-02:12345:0]       ib_device.c:468  UCX  ERROR IB Async event on mlx5_0: local "
     "catastrophic error", "network", "UCX IB async error"),
    ("[1643025432.789437] [gpu-02:12345:0]     rc_mlx5_common.c:123  UCX  ERROR   Fatal: rc_mlx5 completion[11] with "
     "error on mlx5_0:1/0x7f10a8043000: Remote access error, vendor_err 0x88 wr_id 0x0", "network",
     "IB completion error"),
    # libfabric's own log (FI_LOG_LEVEL=warn): a verbs completion error, EFA's failed handshake, PSM2's connect
    ("libfabric:3522:1640000000::verbs:core:vrb_cq_read():109<warn> Work completion status: remote invalid "
     "request error", "network", "libfabric transfer error"),
    ("libfabric:24771:1675241240::efa:ep_ctrl:rxr_pkt_post_handshake_or_queue():1093<warn> Failed to post "
     "HANDSHAKE to peer 4: Unresponsive receiver", "network", "libfabric transfer error"),
    ("libfabric:12903:1655209421:psm2:core:psmx2_ep_connect():156<warn> psm2_ep_connect returned error Operation "
     "timed out, remote epid=2f0e03.If it is a timeout error, try setting FI_PSM2_CONN_TIMEOUT to a larger value "
     "(current: 5 seconds).", "network", "libfabric transfer error"),
    # libibverbs refusing the kernel's ABI
    ("libibverbs: Warning: Driver mlx5 does not support the kernel ABI of 1 (supports 6 to 6) for device "
     "/sys/class/infiniband/mlx5_0", "host", "RDMA stack mismatch"),
    # pyxis unable to start the container (the node's enroot setup); Torque's client without its trqauthd
    ("slurmstepd: error: pyxis: container start failed with error code: 1\nslurmstepd: error: pyxis: printing enroot "
     "log file:\nslurmstepd: error: pyxis:     enroot-mount: failed to mount: /opt/slurm at /home/u/.local/share/"
     "enroot/pyxis_117.0/opt/slurm: Not a directory",
     "host", "Container start failed"),
    ("Error in connection to trqauthd (15137)-[could not connect to unix socket /tmp/trqauthd-unix: 111]", "host",
     "trqauthd unavailable"),
    # PyTorch's warning that cuInit failed with the driver's unknown error (999)
    ("/usr/lib/python3/dist-packages/torch/cuda/__init__.py:107: UserWarning: CUDA initialization: CUDA unknown error "
     "- this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after "
     "program start. Setting the available devices to be zero.", "gpu", "CUDA error (unknown error)"),
    # Open MPI unable to bind a process it started inside the job's cpuset
    ("Open MPI tried to bind a new process, but something went wrong.  The\nprocess was killed without launching the "
     "target application.  Your job\nwill now abort.\n\n  Local host:        gpu-02\n  Application name:  ./a.out\n"
     "  Error message:     hwloc_set_cpubind returned \"Error\" for bitmap \"2,114\"\n  Location:          "
     "rtc_hwloc.c:382", "host", "MPI binding failed"),
    # NVSHMEM's IB transport refused the GPU memory; UCX's single copy between local ranks refused
    ("src/comm/transports/common/transport_ib_common.cpp:58: NULL value mem registration failed\n"
     "src/comm/transports/ibrc/ibrc.cpp:486: non-zero status: 2 Unable to register memory handle.", "host",
     "GPUDirect RDMA registration"),
    ("[1557316560.553339] [gpu-02:12345:0]        cma_ep.c:81   UCX  ERROR process_vm_readv delivered 0 instead of "
     "480960, error message Operation not permitted", "host", "Cross-memory attach refused"),
    # Intel MPI's Hydra launcher: a proxy it could not start or lost, a connection between its proxies
    ("[mpiexec@gpu-01] Error: Unable to run bstrap_proxy on gpu-02 (pid 12345, exit code 65280)", "host",
     "MPI launcher proxy failed"),
    ("[mpiexec@gpu-01] Error: Downstream from host gpu-02 exited abnormally", "host", "MPI launcher proxy failed"),
    ('[bstrap:0:1@gpu-02] HYD_sock_connect (../../../../../src/pm/i_hydra/libhydra/sock/hydra_sock_intel.c:209): '
     'unable to connect from "gpu-02" to "gpu-01" (No route to host)', "network", "MPI launcher connect failed"),
    # out of file descriptors, in the errno's own words (gRPC inside Ray's raylet, Python)
    ("(raylet) [2026-11-20 10:33:45,833 E 4164820 4164820] (raylet) worker_pool.cc:1239: Failed to send exit "
     "request: RpcError: RPC Error message: failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.2: "
     "Too many open files; RPC Error details:  rpc_code: 14", "host", "Open files limit reached"),
    ("OSError: [Errno 23] Too many open files in system: '/scratch/run/out.bin'", "host", "Open files limit reached"),
    # ... or out of processes and threads (the process limit or the cgroup's pids limit)
    ("OpenBLAS blas_thread_init: pthread_create failed for thread 12 of 64: Resource temporarily unavailable",
     "host", "Process limit reached"),
    ("libgomp: Thread creation failed: Resource temporarily unavailable", "host", "Process limit reached"),
    # programs that say so without the errno: squashfs-tools under Apptainer's image extraction, Python
    ("FATAL [U = 20004, P = 394794] execStarter () while extracting met_8.1.sif: root filesystem extraction failed: "
     "extract command failed: FATAL ERROR: Failed to create thread", "host", "Process limit reached"),
    ("RuntimeError: can't start new thread", "host", "Process limit reached"),
    # enroot missing a program it unpacks or starts containers with
    ("pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.05-py3\n[ERROR] Command not found: squashfuse", "host",
     "Container tool missing"),
    # RMM's older C API failing a device allocation
    ("ERROR: RMM call in line 68of file /conda/envs/gdf/conda-bld/libcudf_1558047478243/work/cpp/src/hash/managed_"
     "allocator.cuh failed with result RMM_ERROR_OUT_OF_MEMORY (4)  Attempted to allocate: 4000000000 bytes.",
     "gpu_oom", "GPU OOM"),
    # a training loop dropping a batch that did not fit in GPU memory (fairseq's words)
    ("| WARNING: ran out of memory, skipping batch\nNumber of failed examples: 1", "gpu_oom", "GPU OOM"),
    ("2026-11-20 10:12:01 | WARNING | fairseq.trainer | attempting to recover from OOM in forward/backward pass",
     "gpu_oom", "GPU OOM"),
    # Slurm's PMIx plugin unable to reach another node's step daemon during the address exchange
    ("slurmstepd: error:  mpi/pmix_v3: pmixp_p2p_send: gpu-02 [0]: pmixp_utils.c:467: send failed, rc=1001, "
     "exceeded the retry limit", "network", "PMIx peer unreachable"),
    ("slurmstepd: error:  mpi/pmix_v4: pmixp_dconn_connect: gpu-02 [0]: pmixp_dconn.h:245: Cannot establish direct "
     "connection to gpu-03 (1)", "network", "PMIx peer unreachable"),
    # MPICH's OFI netmod (Intel MPI, Cray MPICH) unable to set up libfabric at start
    ("Abort(1091471) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:\n"
     "MPIR_Init_thread(703)........: \nMPID_Init(958)...............: \n"
     "MPIDI_OFI_mpi_init_hook(1030): OFI addrinfo() failed (ofi_init.c:1030:MPIDI_OFI_mpi_init_hook:No data "
     "available)", "host", "MPI fabric setup failed"),
    # ... and unable to post a transfer to a peer it cannot reach
    ("MPIDI_OFI_send_handler(533)...........: OFI tagged injectdata failed (ofi_impl.h:533:MPIDI_OFI_send_handler:"
     "Cannot assign requested address)", "network", "OFI transfer refused"),
    ("MPIDI_OFI_do_rdma_write(412): OFI rdma write failed (ofi_rma.h:412:MPIDI_OFI_do_rdma_write:No route to host)",
     "network", "OFI transfer refused"),
    # XLA's CUDA async allocator, with and without digit grouping
    ("cuMemAllocAsync failed to allocate 126,257,359,472 bytes (117.59 GiB)", "gpu_oom", "GPU OOM"),
    ("RuntimeError: SYNHELPER workspace Allocation of size ::14493510400 failed!", "gpu_oom", "GPU OOM"),
    # RAPIDS: the Spark plugin's retry framework and RMM's pool allocator
    ("Lost task 142.3 in stage 1089.0 (TID 24175) (10.59.240.71 executor 0): "
     "com.nvidia.spark.rapids.jni.SplitAndRetryOOM: GPU OutOfMemory", "gpu_oom", "GPU OOM"),
    ("MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/opt/conda/include/rmm/mr/device/"
     "pool_memory_resource.hpp:183: Maximum pool size exceeded", "gpu_oom", "GPU OOM"),
    ("MemoryError: std::bad_alloc: RMM failure at:/opt/conda/include/rmm/mr/device/pool_memory_resource.hpp:167: "
     "Maximum pool size exceeded", "gpu_oom", "GPU OOM"),
    ("MemoryError: std::bad_alloc: CUDA error at: /opt/conda/include/rmm/mr/device/cuda_memory_resource.hpp:70: "
     "cudaErrorMemoryAllocation out of memory", "gpu_oom", "GPU OOM"),
    # NCI's PBS: the job's node-local disk allocation full
    ("Job 143560526.gadi-pbs killed due to exceeding jobfs quota. Quota: 15.0GB, Used: 15.0GB, Host: gpu-02",
     "storage", "jobfs quota"),
    # a driver API result number without its text (NVHPC/OpenACC)
    ("Accelerator Fatal Error: call to cuCtxCreate returned error 214", "gpu_memory", "CUDA ECC uncorrectable"),
    # an accelerator's device file held by a process outside the job
    ("jax.errors.JaxRuntimeError: UNKNOWN: TPU initialization failed: open(/dev/vfio/0): Device or resource busy: "
     "Device or resource busy; Couldn't open iommu group /dev/vfio/0", "host", "Accelerator held by another process"),
    # bash reporting a command of the batch script killed by a signal
    ("/var/spool/slurmd/job4242/slurm_script: line 12: 12345 Killed                  python train.py",
     "host_oom", "command SIGKILL"),
    ("/var/spool/slurmd/job4242/slurm_script: line 12: 12345 Bus error               (core dumped) python train.py",
     "host", "SIGBUS (shared memory)"),
    ("A process or daemon was unable to complete a TCP connection to another process:", "network",
     "MPI TCP connect failed"),
    ("srun: error: Task launch for StepId=4242.0 failed on node gpu-02: Invalid node name specified", "host",
     "Task launch failed"),
    # slurmd could not place the tasks on the node's CPUs, or never reported them started
    ("srun: error: JobId=4242 failed to distribute tasks (bind_type:threads,mask_cpu,one_thread) - this should "
     "never happen", "host", "Task layout failed"),
    ("srun: error: timeout waiting for task launch, started 96 of 108 tasks", "host", "Task launch timed out"),
    # PyTorch's shared-memory files live in /dev/shm: not the job's file system
    ("RuntimeError: unable to write to file </torch_18692_1954506624>: No space left on device (28)", "host",
     "/dev/shm full"),
    ("RuntimeError: unable to mmap 1024 bytes from file </torch_1234_5678>: Cannot allocate memory (12)", "host",
     "/dev/shm full"),
    ("OSError: [Errno 12] Cannot allocate memory", "host_oom", "ENOMEM"),
    # PyCUDA's MemoryError is the device's memory
    ("pycuda._driver.MemoryError: cuMemAlloc failed: out of memory", "gpu_oom", "MemoryError"),
    ("The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: "
     "Worker unexpectedly exits with a connection error code 2. End of file.", "host_oom", "Ray worker vanished"),
    ("amrex::Error::0::Write of Vector<Vector<Real>> failed !!!\nSIGABRT", "storage", "Write failed"),
    # casacore's table I/O: a short write (errno still 0, hence `Success`)
    ("SEVERE  ms::concatenate Exception Reported: FiledesIO: write error in "
     "/scratch/obs3/msdir/x_concat.ms/table.f17_TSM1: Success", "storage", "Write failed"),
    ("include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol", "host",
     "NCCL socket family unsupported"),
    # nccl-tests quote the failed call's result text after the host
    ("n2: Test NCCL failure common.cu:303 'remote process exited or there was a network error / '", "network",
     "ncclRemoteError"),
    # Gloo losing a peer is a lead to the network, unless it fell back to the loopback address
    ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:12345",
     "network", "Gloo peer lost"),
    ("[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback\n"
     "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:144] Connection refused", "application",
     "Gloo on the loopback address"),
    ("RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value "
     "store by key '0', but store->get('0') got error: Connection reset by peer", "network", "Store connection lost"),
    ("forrtl: severe (41): insufficient virtual memory", "host_oom", "Fortran out of memory"),
    ("Bus error (core dumped)", "host", "SIGBUS (shared memory)"),
    # PBS and LSF say which limit they killed a job at, or who killed it
    ("=>> PBS: job killed: walltime 86415 exceeded limit 86400", "time_limit", "TIMEOUT"),
    ("PBS: job killed: vmem 38427376kb exceeded limit 33554432kb", "host_oom", "memory limit"),
    ("TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "time_limit", "TIMEOUT"),
    ("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", "host_oom", "memory limit"),
    ("TERM_PREEMPT: job killed after preemption.", "preemption", "preempted"),
    ("TERM_OWNER: job killed by owner.", "cancelled", "killed (bkill)"),
    ("RuntimeError: NCCL Error 3: internal error", "application", "ncclInternalError"),
    ("gpu-02:1234:1300 [0] transport/p2p.cc:275 NCCL WARN Cuda failure 'peer access is not supported between these "
     "two devices'", "host", "GPU peer access unsupported"),
    ("gpu-02:1234:1300 [0] NCCL WARN NET/Socket : peer 10.0.0.2<36474> message truncated : receiving 1048576 bytes "
     "instead of 65536.", "application", "NCCL size mismatch"),
    ("gpu-02:1234:1300 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<56478> with "
     "status=IBV_WC_REM_ACCESS_ERR(10) opcode=0 len=0 vendor_err=136 (Recv)", "network", "NCCL IB completion error"),
    ("Loading checkpoint shards:  38%|######    | 3/8\nKilled", "host_oom", "command SIGKILL"),
    ("RuntimeError: Triton Error [CUDA]: out of memory", "gpu_oom", "CUDA error (out of memory)"),
    # a process pool whose worker was killed from outside
    ("concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly while the "
     "future was running or pending.", "host_oom", "Pool worker killed"),
    ("joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the executor was "
     "unexpectedly terminated. This could be caused by a segmentation fault while calling the function or by an "
     "excessive memory usage causing the Operating System to kill the worker.", "host_oom", "Pool worker killed"),
    # Meson refusing to build on a file stamped in the node's future
    ("ERROR: Clock skew detected. File /home/u/src/build-tmp/../meson.build has a time stamp 3194.0314s in the "
     "future.", "host", "Clock skew"),
    # a certificate not yet valid: the node's clock behind
    ("java.security.cert.CertificateNotYetValidException: NotBefore: Sat Jul 04 19:00:00 CDT 2020", "host",
     "Clock behind"),
    ("curl: (60) SSL certificate problem: certificate is not yet valid", "host", "Clock behind"),
    ("ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: certificate is not "
     "yet valid (_ssl.c:1006)", "host", "Clock behind"),
    # resolvers that did not answer, as .NET and Go word it
    ('Exception calling "DownloadFile" with "2" argument(s): "The remote name could not be resolved: '
     '\'www.cygwin.com\'"', "network", "DNS failure"),
    ('Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on '
     '10.0.0.2:53: server misbehaving', "network", "DNS failure"),
    ('go: downloading golang.org/x/sys v0.1.0: Get "https://proxy.golang.org/golang.org/x/sys/@v/v0.1.0.zip": dial '
     'tcp: lookup proxy.golang.org on 127.0.0.53:53: read udp 127.0.0.1:36491->127.0.0.53:53: i/o timeout',
     "network", "DNS failure"),
    # a public name the node's resolver says does not exist
    ("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.colabfold.com', port=443): Max retries "
     "exceeded with url: /ticket/msa (Caused by NameResolutionError(\"<urllib3.connection.HTTPSConnection object at "
     "0x14cbb4166d40>: Failed to resolve 'api.colabfold.com' ([Errno -2] Name or service not known)\"))",
     "network", "DNS failure"),
    ("npm ERR! request to https://registry.npmjs.org/left-pad failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org",
     "network", "DNS failure"),
    ('Error response from daemon: Get "https://nvcr.io/v2/": dial tcp: lookup nvcr.io on 10.0.0.2:53: no such host',
     "network", "DNS failure"),
    # a socket call with no route, as Python's OSError prints it
    ("OSError: [Errno 101] Network is unreachable", "network", "Network unreachable"),
    ("RuntimeWarning: Couldn't detect a suitable IP address for reaching '10.1.0.22', defaulting to '127.0.0.1': "
     "[Errno 101] Network is unreachable", "network", "Network unreachable"),
    ("urllib3.exceptions.NewConnectionError: <urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish "
     "a new connection: [Errno 113] No route to host", "network", "Network unreachable"),
    # Open MPI's TCP transport reached by another rank than the address it dialled belongs to
    ("[n01][[40143,1],3][btl_tcp_endpoint.c:626:mca_btl_tcp_endpoint_recv_connect_ack] received unexpected process "
     "identifier [[40143,1],2]", "network", "MPI TCP wrong peer"),
    ("WARNING: Open MPI accepted a TCP connection from what appears to be a\nanother Open MPI process but cannot find "
     "a corresponding process\nentry for that peer.", "network", "MPI TCP wrong peer"),
    # Singularity losing the race for the loop device it set up
    ("ERROR  : Failed to set loop flags on loop device: Resource temporarily unavailable\nABORT  : Retval = 255",
     "host", "No loop device for the image"),
    # Python's tempfile finding no directory it can write in
    ("FileNotFoundError: [Errno 2] No usable temporary directory found in ['/tmp', '/var/tmp', '/usr/tmp', "
     "'/home/u/run']", "storage", "No writable temporary directory"),
    # Tenstorrent's runtime out of the card's memory, and its board that would not come back from a reset
    ("TT_FATAL: Out of Memory: Not enough space to allocate 3758096384 B DRAM buffer\nacross 8 banks, where each bank "
     "needs to store 469762048 B,", "gpu_oom", "Accelerator OOM"),
    ("Error: Unsuccessful board reset, trying again in 5 seconds ...\nError: Unable to reset board successfully, "
     "rebooting\n##[error]The runner has received a shutdown signal.", "gpu", "Accelerator reset failed"),
    # Habana Gaudi's collectives finding no RDMA device of the card
    ("hcl_ibverbs_t::init failed to find matching Habana IB device (hlib_6)", "host", "Gaudi RDMA device missing"),
    # a tool that says its disk is full in its own words
    ("Cannot write to /tmp/fastk.1234.tmp. Enough disk space?", "storage", "Disk full"),
    ('  Volume group "bb" has insufficient free space (0 extents): 2560 required.', "storage", "Disk full"),
    ("IRMA/FLU ERROR: needed ~18425.78M to execute, but only 6064.29M available on disk", "storage", "Disk full"),
    ("Error: request( --check_pt ) failed!  Server reply: Could not save check point file. file system full or "
     "permissions ?", "storage", "Disk full"),
    # icefall's recipes finding their largest batch does not fit before the first epoch
    ("2026-11-20 10:58:57,481 ERROR [train.py:1345] Your GPU ran out of memory with the current max_duration "
     "setting. We recommend decreasing max_duration and trying again.", "gpu_oom", "GPU OOM"),
    # HAMi's GPU-sharing layer: the job over its memory share, or the layer itself failing
    ("[HAMI-core ERROR (pid:1 thread=140160828682240 allocator.c:53)]: Device 0 OOM 24146608130 / 24146608128",
     "gpu_oom", "vGPU memory share exceeded"),
    ("[HAMI-core ERROR (pid:1 thread=140160828682240 allocator.c:53)]: Device 0 OOM 18446744073707737660 / "
     "24146608128", "host", "GPU-sharing layer failed (HAMi-core)"),
    # NVML's library missing on the node or from the container, as the tools that probe GPUs say it
    ("Loading NVML\ncould not load NVML library", "host", "NVIDIA driver library missing"),
    ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display "
     "Driver is properly installed and present in your system.", "host", "NVIDIA driver library missing"),
    ("pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", "host", "NVIDIA driver library missing"),
    ("[HAMI-core ERROR (pid:7 thread=140360328144640 allocator.c:115)]: cuMemoryAllocate failed res=2", "gpu_oom",
     "vGPU memory share exceeded"),
    ("[HAMI-core ERROR (pid:7 thread=140360328144640 allocator.c:115)]: cuMemoryAllocate failed res=999", "host",
     "GPU-sharing layer failed (HAMi-core)"),
    ("[HAMI-core ERROR (pid:565 thread=140267266266944 multiprocess_memory_limit.c:831)]: Illegal device id: "
     "850725928", "host", "GPU-sharing layer failed (HAMi-core)"),
    # C++'s operator new and a system call refused host memory
    ("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  St9bad_alloc", "host_oom",
     "std::bad_alloc"),
    ("  0:15:49.521     1M / 16G   ERROR   General  (mmapped_reader.hpp :  52)   mmap(2) failed. Reason: Cannot "
     "allocate memory. Error code: 12", "host_oom", "ENOMEM"),
    ("slurmstepd: error: Exceeded step memory limit at some point.", "host_oom", "memory limit exceeded"),
    ("Failed to initialize NVML: Unknown Error", "host", "NVML unavailable"),
    # ESTALE as glibc wrote it before 2.20
    ("/var/spool/slurmd/job4242/slurm_script: line 9: /home/u/run/history.txt: Stale NFS file handle",
     "storage", "ESTALE"),
    # the checks of NVIDIA's multi-GPU samples and of the CUDA samples (helper_cuda.h: the name only)
    ('ERROR: CUDA RT call "cudaMalloc(&a_new, nx * ny * sizeof(real))" in line 378 of file jacobi.cpp failed with '
     "out of memory (2).", "gpu_oom", "CUDA error (out of memory)"),
    ('CUDA error at test.cu:44 code=35(cudaErrorInsufficientDriver) "cudaMalloc((void **)&d_u, sizeof(float)*NX)"',
     "application", "CUDA build mismatch"),
    # TensorFlow 1.x names the device on the next line, or not at all
    ("ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[5760,4,4,2048]",
     "gpu_oom", "GPU OOM"),
    # XLA's BFC allocator, a TPU's compiler and PyTorch/XLA out of device memory
    ("2026-11-20 10:22:35.625179: W external/tsl/tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out "
     "of memory trying to allocate 37.88GiB (rounded to 40675475712)requested by op", "gpu_oom", "GPU OOM"),
    ("  Compilation failure: Ran out of memory in memory space hbm. Used 8.38G of 8.00G hbm. Exceeded hbm capacity "
     "by 385.25M.", "gpu_oom", "GPU OOM"),
    ("2026-11-20 10:48:58 10.128.0.33 [3]   (1) Resource exhausted: Attempting to allocate 180.59M. That was not "
     "possible. There are 142.58M free.; (0x3x0_HBM1)", "gpu_oom", "GPU OOM"),
    # the driver API's error name with no text after it, alone or inside another exception's message
    ("cuMemAlloc failed: CUDA_ERROR_ECC_UNCORRECTABLE", "gpu_memory", "CUDA ECC uncorrectable"),
    ("numba.cuda.cudadrv.driver.CudaAPIError: [214] Call to cuMemcpyDtoH results in CUDA_ERROR_ECC_UNCORRECTABLE",
     "gpu_memory", "CUDA ECC uncorrectable"),
    ("numba.cuda.cudadrv.driver.CudaAPIError: [700] Call to cuMemcpyDtoH results in CUDA_ERROR_ILLEGAL_ADDRESS",
     "application", "CUDA error ([700] Call to cuMemcpyDtoH results in CUDA_ERROR_ILLEGAL_ADD)"),
    # the runtime's text behind c10's warning and the common gpuErrchk macro
    ("[W CUDAGuardImpl.h:46] Warning: CUDA warning: uncorrectable ECC error encountered (function "
     "uncheckedGetDevice)", "gpu_memory", "CUDA ECC uncorrectable"),
    ("GPUassert: uncorrectable ECC error encountered /home/u/src/kernel.cu 88", "gpu_memory", "CUDA ECC uncorrectable"),
    # the cluster's own services failing the job before it ran: munge, slurmdbd, the name service,
    # Cray PMI's port on the node, the PBS server's disk, a batch launch the node refused
    ("salloc: error: Munge decode failed: Unauthorized credential for client UID=148069 GID=30\n"
     "Job submit/allocate failed: Protocol authentication error", "host", "Credential refused (munge)"),
    ("sacctmgr: error: slurm_persist_conn_open: No response to persist_init\n"
     "salloc: error: lua: You are not a member of account 'gpu'.", "host", "slurmdbd unreachable"),
    ('Error for job 580: can\'t get password entry for user "alice". Either the user does not exist or NIS error!',
     "host", "User unknown on the node"),
    ("Fri Mar 14 11:56:06 2025: [PE_0]:inet_listen_socket_setup:bind() failed [fd=3, port=1371 err='Address "
     "already in use']\nMPIR_pmi_init(110)...: PMI_Init returned 1", "host", "PMI port in use"),
    ("qsub: PBS server internal error MSG=cannot write job command file", "storage",
     "PBS server could not save the job"),
    ("state=PENDING reason=JobLaunchFailure nodes=[]", "host", "Batch launch failed"),
    ("[r500n001:59444:0:59444] ib_mlx5_log.c:143  Local QP operation on mlx5_2:1/IB (synd 0x2 vend 0x68 "
     "hw_synd 0/31)", "network", "IB completion error"),
    # Kubernetes' events for a pod it took away, as kubectl describe prints them
    ("  Warning  Evicted    3m    kubelet  The node was low on resource: memory. Threshold quantity: 100Mi, "
     "available: 92Ki. Container trainer was using 61234Mi, request is 0, has larger consumption of memory.",
     "host_oom", "Evicted (node memory)"),
    ("  Warning  Evicted    3m    kubelet  The node was low on resource: ephemeral-storage. Threshold quantity: "
     "10Gi, available: 9Gi.", "storage", "Evicted (node disk)"),
    ("  Normal   Preempted  5m    default-scheduler  Preempted by pod 8c1e2f3a-1b2c-4d5e-8f90-123456789abc on node "
     "gpu-02", "preemption", "Preempted (Kubernetes)"),
    ("  Warning  NodeNotReady  2m   node-controller  Node is not ready", "host", "Node not ready"),
    ("Warning  UnexpectedAdmissionError  pod/train-0  Allocate failed due to device plugin GetPreferredAllocation "
     "rpc failed", "host", "Device plugin failed"),
    ("Status:              Failed\nReason:            UnexpectedAdmissionError\nMessage:         Pod Allocate failed due "
     "to requested number of devices unavailable for nvidia.com/gpu. Requested:1, Available: 0, which is unexpected",
     "host", "Device plugin failed"),
    # NCCL's newer wording of a failed verbs call (the errno's number before its text)
    ("gpu-02:1234:5678 [0] NCCL WARN Call to ibv_create_qp failed with 12 Cannot allocate memory", "host",
     "RDMA locked-memory limit"),
    # a driver API name closing a wrapper's own message: with its number, or before more of it
    ("  what():  Error deleting array moleculeStartIndex: CUDA_ERROR_ILLEGAL_ADDRESS (700)", "application",
     "CUDA error (CUDA_ERROR_ILLEGAL_ADDRESS)"),
    ("(GTL DEBUG: 1) cuIpcOpenMemHandle: invalid argument, CUDA_ERROR_INVALID_VALUE, line no 360", "application",
     "CUDA invalid argument"),
    # ROCm aborting the queue of a kernel that trapped (a device-side assert)
    (":0:rocdevice.cpp            :2880: 1234567890 us: [pid:1234  tid:0x7f00] Device::callbackQueue aborting with "
     "error : HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception. code: 0x1016",
     "application", "GPU kernel exception"),
    # torch.save's zip writer failing on its last record
    ("RuntimeError: [enforce fail at inline_container.cc:764] . PytorchStreamWriter failed writing central "
     "directory: file write failed", "storage", "RuntimeError"),
    # LSF's swap limit and an administrator's requeue
    ("TERM_SWAP: job killed after reaching LSF swap usage limit.", "host_oom", "memory limit"),
    ("TERM_REQUEUE_ADMIN: job killed and requeued by root or LSF administrator.", "requeued", "requeued (brequeue)"),
    # HTCondor's job event log and hold reasons
    ("012 (4242.000.000) 2026-11-20 10:30:00 Job was held.\n\tError from slot1_1@gpu-02: Job has encountered an "
     "out-of-memory event.", "host_oom", "memory limit"),
    ("4242.0   alice   11/20 10:30 Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 3000000.",
     "host_oom", "memory limit"),
    ("Hold reason: Error from slot1_7@gpu-02: Docker job has gone over memory limit of 1024 Mb", "host_oom",
     "memory limit"),
    ("012 (4242.000.000) 2026-11-20 10:30:00 Job was held.\n\tThe job exceeded allowed execute duration of "
     "1+00:00:00", "time_limit", "TIMEOUT"),
    ("004 (4242.000.000) 2026-11-20 10:30:00 Job was evicted.\n\t(0) Job was not checkpointed.", "preemption",
     "evicted"),
    # a training loop's own NaN guard that exits instead of raising
    ("Loss is nan, stopping training", "application", "NaN/Inf loss"),
    ("Encountered NaN loss at step 1234. Stopping.", "application", "NaN/Inf loss"),
    # older PyTorch gives no reason for the shared-memory file it could not write
    ("RuntimeError: unable to write to file </torch_1394_2747491098>", "host", "/dev/shm full"),
    ("nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown.", "host",
     "NVIDIA driver version mismatch"),
    ("socketPollConnect: connect to 169.254.170.23<34567> returned Connection refused, retrying (13/34)",
     "application", "NCCL on a link-local address"),
    # no GPU at all: the node's driver or the job's device setup
    ("cudamat.cudamat.CUDAMatException: CUDA error: no CUDA-capable device is detected", "host", "No GPU visible"),
    # the driver's own libraries come with the node's driver (or the container runtime's hook)
    ("ImportError: libcuda.so.1: cannot open shared object file: No such file or directory", "host",
     "NVIDIA driver library missing"),
    ('docker: Error response from daemon: error gathering device information while adding custom device '
     '"/dev/nvidia-uvm": no such file or directory.', "host", "NVIDIA device node missing"),
    ('Warning  Failed  113s  kubelet  Error: container create failed: time="2026-11-20T10:35:13Z" level=error '
     'msg="runc create failed: unable to start container process: container init was OOM-killed (memory limit too '
     'low?)"', "host_oom", "Container OOM-killed"),
    ("cxil_map: write error", "application", "Slingshot memory registration failed"),
    ("ERROR: Unexpected segmentation fault encountered in worker.", "application", "Segmentation fault"),
    ("[gpu-02:12345:0:12345] Caught signal 8 (Floating point exception: integer divide by zero)", "application",
     "Floating point exception"),
    ("Program received signal SIGFPE: Floating-point exception - erroneous arithmetic operation.", "application",
     "Floating point exception"),
    # PyTorch quotes ncclGetErrorString: older NCCL's text for ncclInternalError is just "internal error"
    ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, internal error, NCCL "
     "version 2.14.3", "application", "ncclInternalError"),
    # Slurm's MPI plugin present but unable to load the library it was built against
    ("srun: error:  mpi/pmix_v3: init: (null) [0]: mpi_pmix.c:139: pmi/pmix: can not load PMIx library\n"
     "srun: error: Couldn't load specified plugin name for mpi/pmix: Plugin init() callback failed\n"
     "srun: error: cannot create mpi context for mpi/pmix\n"
     "srun: error: invalid MPI type 'pmix', --mpi=list for acceptable types", "host", "Slurm MPI plugin broken"),
    ("MPT ERROR: ibdev_multirail.c:progress_xrc_recv:7364 XRC recv QP to RTR: (unknown error) (22)", "network",
     "MPT InfiniBand error"),
    # container runtimes the node's kernel gives no user namespace or loop device
    ("FATAL:   while extracting image.sif: root filesystem extraction failed: extract command failed: ERROR  : "
     "Failed to create user namespace: user namespace disabled", "host", "User namespaces unavailable"),
    ("enroot-nsenter: failed to create user namespace: Permission denied", "host", "User namespaces unavailable"),
    ("  ch-run[11544]: can't init user+mount namespaces: Invalid argument (ch_core.c:381 22)", "host",
     "User namespaces unavailable"),
    ("ERROR: no apparent support for loop devices!FAILED to loop mount image: /images/f3.squashfs", "host",
     "No loop device for the image"),
    # enroot's 30 s flock on the container's root file system, on a shared data path
    (" 58: slurmstepd: error: pyxis: [ERROR] Could not acquire rootfs lock\n"
     " 58: slurmstepd: error: pyxis: couldn't start container", "storage", "Container lock timed out"),
    # the container runtime's hook finding the driver hung on a GPU
    ("nvidia-container-cli: detection error: driver error: timed out: unknown", "gpu", "NVIDIA driver unreachable"),
    # HPE PALS unable to pass the launch to a child node's daemon
    ("launch failed on x3104c0s1b0n0: Couldn't forward RPC launch(ab751d77-e80a-4c54-b1c2-4e881f7e8c90) to child "
     "x3104c0s31b0n0.hsn.cm.polaris.alcf.anl.gov: Resource temporarily unavailable", "host", "Launch forward failed"),
    # NCCL's connect dropped by the local stack (ECONNABORTED)
    ("node-0:11172:11249 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
     "fe80::20d:3aff:fef7:74b3%enP7906s1<51577> failed : Software caused connection abort", "network",
     "NCCL peer unreachable"),
    # pyxis attaching to a container whose namespaces vanished; enroot on a kernel without the SSBD prctl
    ("error:  pyxis: unable to open user namespace file: No such file or directory\n"
     "error: pyxis: couldn't get container namespaces\n"
     "error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1", "host", "Container attach failed"),
    ("0: slurmstepd-gn03: error: pyxis:     enroot-unshare: failed to disable SSBD mitigation: Numerical result out "
     "of range\n0: slurmstepd-gn03: error: spank: required plugin spank_pyxis.so: task_init_privileged() failed with "
     "rc=-1", "host", "Container runtime setup failed"),
    ("FATAL:   container creation failed: mount /proc/self/fd/3->/var/singularity/mnt/session/rootfs error: while "
     "mounting image /proc/self/fd/3: failed to find loop device: no loop devices available", "host",
     "No loop device for the image"),
    ("E1120 10:18:50.796852     915 tpunetd_client.cc:311] Detected failure SLICE_FAILURE_CHIP_DRIVER_ERROR in "
     "session e6c885828b538167; Start failure handling", "gpu", "TPU chip driver error"),
    # a lock the mount refused as an operation (no lock manager, no flock support): the file system's
    ('ValueError: Error opening "zarr" driver: Error writing local file "/scratch/u/ckpt/.zarray": Failed to '
     'acquire lock on file: /scratch/u/ckpt/.zarray.__lock [OS error: Invalid argument]', "storage",
     "file lock refused"),
    ("OSError: [Errno 37] No locks available", "storage", "file lock refused"),
    ("flock: /lustre/proj/run.lock: Function not implemented", "storage", "file lock refused"),
    ("SCR v3.0.0 ERROR: rank 0 on n1: Failed to acquire file lock on /autofs/proj/halt.scr: flock(23, 1) "
     "errno=524 Unknown error 524 @ /src/scr_io.c:173", "storage", "file lock refused"),
    # ROMIO prints its own remedy, then the errno's text
    ("File locking failed in ADIOI_Set_lock(fd 14,cmd F_SETLKW/7,type F_WRLCK/1,whence 0) with return value"
     " FFFFFFFF and errno 26.", "storage", "MPI-IO file lock refused"),
    ("ADIOI_Set_lock:: Function not implemented", "storage", "MPI-IO file lock refused"),
    # ... except HDF5's, which has its own switch for mounts without locks
    ("OSError: Unable to create file (unable to lock file, errno = 38, error message = 'Function not implemented')",
     "storage", "HDF5 file lock refused"),
    ("#3 H5FDsec2.c line 939 in H5FD_sec2_lock(): unable to flock file, errno = 524, error message = 'Unknown error 524'",
     "storage", "HDF5 file lock refused"),
    # HDF5 1.10.0-1.10.1: the errno alone
    ("H5FDsec2.c line 940 in H5FD_sec2_lock(): unable to lock file, errno = 524", "storage", "HDF5 file lock refused"),
    # Slurm before 17.11: the memory and swap counter hit the limit, so the kernel killed
    ("slurmstepd: Exceeded job memory limit at some point. oom-killer likely killed a process.", "host_oom",
     "cgroup OOM"),
    # Open MPI: a remote daemon missing a system library; the openib transport's locked-memory help
    ("orted: error while loading shared libraries: libnuma.so.1: cannot open shared object file: No such file or "
     "directory", "host", "Launcher library missing"),
    ("The OpenFabrics (openib) BTL failed to initialize while trying to\nallocate some locked memory.", "host",
     "RDMA locked-memory limit"),
    # Open MPI's signal handler: a mapped page with no backing (a full tmpfs), in its own spelling
    ("[gpu-02:12597] Signal code: Non-existant physical address (2)", "host", "SIGBUS (shared memory)"),
    # Open MPI 1.0-1.2 and later: a TCP connection the kernel gave up on
    ("mca_btl_tcp_frag_recv: readv failed with errno=110", "network", "MPI TCP connection timed out"),
    ("connect() failed with errno=113", "network", "MPI TCP connect failed"),
    ("  Error number:      10 (IBV_EVENT_PORT_ERR)", "network", "MPI IB async error"),
    # any program missing a library the operating system's packages ship: the node's image
    ("/home/u/bin/app: error while loading shared libraries: libicudata.so.50: cannot open shared object file: "
     "No such file or directory", "host", "System library missing"),
    ("error while loading shared libraries: libibverbs.so.1: cannot open shared object file", "host",
     "System library missing"),
    # Open MPI 1.0 and 1.2's wording of the verbs queues the locked-memory limit refused
    ("[0,1,0][btl_openib.c:803:mca_btl_openib_module_init] error creating high priority cq for mthca0 errno says "
     "Cannot allocate memory", "host", "RDMA locked-memory limit"),
    ("The OpenIB BTL failed to initialize while trying to allocate some", "host", "RDMA locked-memory limit"),
    # NCCL given a topology (file, net plugin) that does not match what it sees
    ("gpu-02:2196:2275 [1] graph/xml.h:101 NCCL WARN Attribute arch of node cpu not found", "application",
     "NCCL topology mismatch"),
    ("graph/topo.h:230 NCCL WARN Could not find NET with id 0", "application", "NCCL topology mismatch"),
    ("::16674:17023 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.", "application",
     "NCCL topology mismatch"),
    # an S3-compatible store out of disk under a checkpoint upload
    ("minio.error.ResponseError: ResponseError: code: XMinioStorageFull, message: Storage backend has reached its "
     "minimum free disk threshold. Please delete a few objects to proceed., bucket_name: sessions", "storage",
     "ResponseError"),
    # a completion error whose line a mail wrapped after `to: <peer>`
    ("error polling LP CQ with status WORK REQUEST FLUSHED ERROR status", "network", "IB completion error"),
    # PSM finding no adapter of its own on the node, the host and pid glued to the text
    ("gpu-02.cluster.edu.28120PSM Could not find an InfiniPath Unit on device /dev/ipath (30s elapsed) (err=21)",
     "host", "PSM adapter missing"),
    ("gpu-02.53882PSM2 no hfi units are active (err=23)", "host", "PSM adapter missing"),
    ("gpu-02.cluster.edu.25191Driver initialization failure on /dev/ipath (err=23)", "host", "PSM adapter missing"),
    # MVAPICH's intra-node channel finding /dev/shm full
    ("gpu-02: Unable to allocate shared memory for intra-node messaging.", "host", "/dev/shm full"),
    # Open MPI 1.0 and 1.1: the completion status as a number alone
    ("[0,1,144][btl_openib_component.c:782:mca_btl_openib_component_progress]\n"
     "error polling HP CQ with status 12 for wr_id 5775790 opcode 0", "network", "IB completion error"),
    # GCC's driver: a compiler pass or the linker killed from outside
    ("g++: fatal error: Killed signal terminated program cc1plus", "host_oom", "compiler SIGKILL"),
    ("collect2: fatal error: ld terminated with signal 9 [Killed]", "host_oom", "compiler SIGKILL"),
    # hwloc rejecting the topology the node's BIOS or kernel reports, 1.x and 2.x
    ("* Hwloc has encountered what looks like an error from the operating system.", "host", "Invalid CPU topology"),
    ("* hwloc 2.0.4 received invalid information from the operating system.", "host", "Invalid CPU topology"),
    # an InfiniBand port down, as each MPI says it (Open MPI 1.6 broke the line after `no`)
    ("WARNING: There is at least one OpenFabrics device found but there are no\nactive ports detected (or Open MPI "
     "was unable to use them).", "network", "IB port down"),
    ("[mgmt:30198] 7 more processes have sent help message help-mpi-btl-openib.txt / no active ports found", "network",
     "IB port down"),
    ("MPID_nem_ib_init(386).....: Failed to get IB ports - No IB port found to be active", "network", "IB port down"),
    ("[gpu-02:mpi_rank_0][rdma_open_hca] No active HCAs found on the system!!! 0", "network", "IB port down"),
    # MVAPICH's signal handler
    ("[gpu-02:mpi_rank_3][error_sighandler] Caught error: Bus error (signal 7)", "host", "SIGBUS (shared memory)"),
    ("[gpu-02:mpi_rank_3][error_sighandler] Caught error: Segmentation fault (signal 11)", "application",
     "Segmentation fault"),
    # limits the node's daemon passes on to the job
    ("libibverbs: Warning: RLIMIT_MEMLOCK is 32768 bytes.\n    This will severely limit memory registrations.",
     "host", "RDMA locked-memory limit"),
    ("[gpu-01:04123] ORTE_ERROR_LOG: The system limit on number of network connections a process can open was "
     "reached in file oob_tcp.c at line 447", "host", "Process limit too low"),
    ("[gpu-01:22862] [[6399,0],0] ORTE_ERROR_LOG: The system limit\non number of network connections a process can "
     "open was reached in file oob_tcp.c at line 447", "host", "Process limit too low"),
    ("Error: system limit exceeded on number of network connections that can\nbe open", "host", "Process limit too low"),
    ("[gpu-02:13463] mca_oob_tcp_accept: accept() failed with errno 24.", "host", "Process limit too low"),
    ("[gpu-02:12345] Read -1, expected 65536, errno = 1", "host", "Cross-memory attach refused"),
    ("[gpu-02:12345] Read -1, expected 65536, errno = 1   ", "host", "Cross-memory attach refused"),  # padded
    # Open MPI's installation missing its own files on the node
    ("Sorry!  You were supposed to get help about:\n    orte_init:startup:internal-failure\nfrom the file:\n"
     "    help-orte-runtime\nBut I couldn't find any file matching that name.  Sorry!", "host",
     "MPI installation incomplete"),
    ("[gpu-01:12345] mca_oob_tcp_peer_try_connect: connect to 10.0.0.2:46311 failed: No route to host (113)",
     "network", "MPI TCP connect failed"),
    # a process dead of SIGBUS, as its parent reports it
    ("Fatal Python error: Bus error", "host", "SIGBUS (shared memory)"),
    ("RuntimeError: Rank 0 scheduler died during initialization (exit code: -7)", "host", "SIGBUS (shared memory)"),
    ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 0 (pid: 12345) of "
     "binary: /usr/bin/python", "host", "SIGBUS (shared memory)"),
    ("torch.distributed.elastic.multiprocessing.api: [WARNING] Signal 7 (SIGBUS) received by PID 4711", "host",
     "SIGBUS (shared memory)"),
    # a CUDA check macro that prints the error's number and place before its text (AMReX)
    ("amrex::Abort::0::CUDA error 2 in file ../../amrex/Src/Base/AMReX_Arena.cpp line 169: out of memory !!!",
     "gpu_oom", "CUDA error (out of memory !!!)"),
    ("terminate called after throwing an instance of 'boost::interprocess::interprocess_exception'\n  what():  "
     "boost::interprocess::intermodule_singleton initialization failed", "host", "/dev/shm full"),
    ("slurmstepd: error: Prolog hung on node gpu-02", "host", "Node prolog hung"),
    ("slurmstepd: error: Munge decode failed: Expired credential\nslurmstepd: error: Verifying authentication "
     "credential: Expired credential", "host", "Credential refused (munge)"),
    ("slurmstepd: error: _fork_all_tasks: Failed to invoke task plugins: one of task_p_pre_setuid functions returned "
     "error", "host", "Task plugin failed"),
    # a worker killed from outside, as its parent reports it
    ("torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGKILL", "host_oom",
     "worker SIGKILL"),
    ("subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', '--local_rank=0']' died with "
     "<Signals.SIGKILL: 9>.", "host_oom", "worker SIGKILL"),
    # NCCL quoting CUDA's refusal of a GPU number the process cannot see
    ("[rank3]: ncclUnhandledCudaError: Call to CUDA function failed.\n[rank3]: Last error:\n"
     "[rank3]: Cuda failure 'invalid device ordinal'", "application", "GPU index out of range"),
    ('squeue: error: Munge encode failed: Failed to access "/var/run/munge/munge.socket.2": Permission denied',
     "host", "munge unavailable"),
    ("srun: error: Invalid user for SlurmUser slurm, ignored\nsrun: fatal: Unable to process configuration file",
     "host", "User lookup failed"),
    # a checkpoint write to a bucket that stalled, as TensorStore logs it
    ("W0000 00:00:1715498963.019816  583764 curl_transport.cc:444] Error [28]=Timeout was reached in curl operation\n"
     "Operation too slow. Less than 1024 bytes/sec transferred the last 60 seconds", "storage",
     "Object storage transfer failed"),
    # a file system the kernel remounted read-only, as shell tools, Python and Java say it
    ("touch: cannot touch '/home/jenkins/ws/jenkins-log.txt': Read-only file system", "storage", "EROFS"),
    ("OSError: [Errno 30] Read-only file system: '/scratch/u/ckpt/step_100.pt'", "storage", "EROFS"),
    ("java.nio.file.FileSystemException: /data/u/out.bin: Read-only file system", "storage", "EROFS"),
    # a build step killed from outside, as make reports it
    ("make[1]: *** [generated/linux/release/64/unittest/std/regex/internal/tests.o] Killed\n"
     "make[1]: *** Waiting for unfinished jobs....", "host_oom", "build step SIGKILL"),
    ("make[2]: *** [CMakeFiles/solver.dir/build.make:76: solver.o] Error 137", "host_oom", "build step SIGKILL"),
    # NVML's return code quoted by number
    ("nvmlCheck(nvmlInitWithFlags(NVML_INIT_FLAG_NO_GPUS | NVML_INIT_FLAG_NO_ATTACH));\n"
     "NVML Error 18: Driver/library version mismatch", "host", "NVIDIA driver version mismatch"),
    # the node provisioned without Slurm's configuration, old and new wordings
    ('sbatch: error: s_p_parse_file: unable to status file "/etc/slurm/slurm.conf"', "host",
     "Slurm configuration unreadable"),
    ("srun: error: s_p_parse_file: unable to status file /etc/slurm/gres.conf: No such file or directory, retrying "
     "in 1sec up to 60sec", "host", "Slurm configuration unreadable"),
    ("environment: line 17: /usr/share/lmod/lmod/libexec/lmod: No such file or directory\n"
     "/var/spool/slurmd/job4242/slurm_script: line 8: mpirun: command not found", "host", "Module system missing"),
    ("[gpu-02:22914] [btl_gm.c:489] send completed with unhandled gm error 18\n[gpu-02:22914] pml_ob1_sendreq.c:211 "
     "FATAL", "network", "Myrinet send failed"),
    # Slurm held a batch job whose launch failed on its node
    ("JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\n4242 p job.sh u PD 0:00 1 (launch failed requeued held)",
     "host", "Batch launch failed"),
    # the JVM's heap is host memory, not the GPU's
    ('Exception in thread "main" java.lang.OutOfMemoryError: Java heap space', "host_oom", "Java heap exhausted"),
    ("java.lang.OutOfMemoryError: GC overhead limit exceeded", "host_oom", "Java heap exhausted"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "gpu_oom", "CUDA OOM"),
    # PyTorch's allocator on ROCm and Intel GPUs, and Level Zero's own result
    ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 63.98 GiB",
     "gpu_oom", "CUDA OOM"),
    ("RuntimeError: XPU out of memory. Tried to allocate 2.00 GiB (GPU 0; 64.00 GiB total capacity)", "gpu_oom",
     "CUDA OOM"),
    ("RuntimeError: UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "gpu_oom", "Intel GPU OOM"),
    # ROCm 5's HIP prints the error's name where CUDA prints its text
    ("RuntimeError: HIP error: hipErrorNoDevice", "host", "No GPU visible"),
    ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  HIP error: "
     "hipErrorECCNotCorrectable", "gpu_memory", "CUDA ECC uncorrectable"),
    ("RuntimeError: HIP error: hipErrorNoBinaryForGpu", "application", "CUDA build mismatch"),
    ("RuntimeError: CUDA error: invalid device function", "application", "CUDA build mismatch"),
    # MPI-IO's collective buffers, and a BeeGFS target the client cannot reach
    ("Out of memory in file ../../../../../../../opensrc/ompi/ompi/mca/io/romio321/romio/adio/ad_gpfs/"
     "ad_gpfs_rdcoll.c, line 1178", "host_oom", "ENOMEM"),
    ("cat: /wynton/group/lab/data.bin: Communication error on send", "storage", "ECOMM"),
    # the ROCm runtime aborting a queue over an out-of-bounds access
    (":0:rocdevice.cpp            :2875: 1706000000 us: [pid:1234 tid:0x7f] Callback: Queue 0x7f0000 aborting with "
     "error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest "
     "legal address. code: 0x29", "application", "GPU memory access fault"),
    # Hygon DTK's banner for the same fault on a DCU
    ("Invalid address access: 0x4b39aa606000, Error code: 1.\n\n>>>>>>>> KERNEL VMFault !!!! <<<<<<\n",
     "application", "GPU memory access fault"),
    # ... and the same report where the driver says the GPU's ECC or a hang recovery caused it
    ("Memory access fault by GPU node-4 (Agent handle: 0x55d0d0e8c170) on address 0x7f2a4c200000. Reason: DRAM ECC "
     "failure.", "gpu_memory", "AMD GPU ECC fault"),
    ("Memory access fault by GPU node-2 (Agent handle: 0x56468ab3bb50) on address 0x7fe55fb03000. Reason: Generic "
     "hang recovery.", "gpu", "AMD GPU hardware exception"),
    ("Memory access fault by GPU node-2 (Agent handle: 0x56468ab3bb50) on address 0x7fe55fb03000. Reason: Page not "
     "present or supervisor privilege.", "application", "GPU memory access fault"),
    # the node's RDMA libraries from another release than its kernel modules
    ("   mlx4: There is a mismatch between the kernel and the userspace\nlibraries: Kernel does not support XRC. "
     "Exiting.", "host", "RDMA stack mismatch"),
    ("gpu-02:1234:1300 [3] NCCL WARN NET/Socket : Connect to 10.0.0.2<4567> failed : No route to host", "network",
     "NCCL peer unreachable"),
    # ... and as NCCL echoes its socket layer after `Last error:`, without the tag
    ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
     "Last error:\nsocketStartConnect: Connect to 10.0.0.2<4567> failed : No route to host", "network",
     "NCCL peer unreachable"),
    # NCCL's own troubleshooting cases: a registration failing without an error text (locked memory or
    # GPUDirect RDMA), and its shared memory deleted under the job (systemd-logind's RemoveIPC)
    ("gpu-02:1234:1300 [0] NCCL WARN Call to ibv_reg_mr failed", "host", "RDMA memory registration failed"),
    ("gpu-02:1234:1300 [0] NCCL WARN unlink shared memory /dev/shm/nccl-d5rTd0 failed, error: No such file or "
     "directory", "host", "Shared memory removed under the job"),
    # a peer that advertised its loopback address: the interface NCCL may use is set wrong
    ("gpu-02:1234:1300 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 127.0.0.1<45069> failed : "
     "Software caused connection abort", "application", "NCCL on a loopback address"),
    ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
     "Last error:\nsocketStartConnect: Connect to 127.0.0.1<45069> failed : Software caused connection abort",
     "application", "NCCL on a loopback address"),
    ("gpu-02:1234:1300 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 169.254.170.23<45069> failed "
     ": Connection refused", "application", "NCCL on a link-local address"),
    # openib could not create a queue on the adapter: Open MPI's words name the adapter, not memlock
    ("The OpenFabrics (openib) BTL failed to initialize while trying to\ncreate an internal queue.  This typically "
     "indicates a failed\nOpenFabrics installation, faulty hardware, or that Open MPI is", "network",
     "IB adapter queue failed"),
    ("[gpu-02][[5397,1],72][btl_openib_component.c:3547:poll_device] error polling HP CQ with -2 errno says Device "
     "or resource busy", "network", "IB adapter queue failed"),
    ("The OpenFabrics (openib) BTL failed to initialize while trying to\nallocate some locked memory.  This typically "
     "can indicate that the\nmemlock limits are set too low.", "host", "RDMA locked-memory limit"),
    # a port scanner's connection to MPICH's TCP port
    ("Assertion failed in file src/mpid/ch3/channels/nemesis/netmod/tcp/socksm.c at line 572: hdr.pkt_type == "
     "MPIDI_NEM_TCP_SOCKSM_PKT_ID_INFO || hdr.pkt_type == MPIDI_NEM_TCP_SOCKSM_PKT_TMPVC_INFO", "network",
     "MPICH foreign connection"),
    # PyTorch's CPU allocator refused by the system (current and older words)
    ("RuntimeError: [enforce fail at alloc_cpu.cpp:117] . DefaultCPUAllocator: can't allocate memory: you tried to "
     "allocate 2147483648 bytes. Error code 12 (Cannot allocate memory)", "host_oom", "CPU allocation failed"),
    ("RuntimeError: [enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: not enough memory: you tried to "
     "allocate 1073741824 bytes.", "host_oom", "CPU allocation failed"),
    # Apache Arrow's allocator refused by the system
    ("pyarrow.lib.ArrowMemoryError: realloc of size 2172846080 failed", "host_oom", "MemoryError"),
    # DeepSpeed's launcher reporting a worker killed by SIGKILL, or dead of SIGBUS
    ("[2026-11-20 10:30:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
     "'--local_rank=0'] exits with return code = -9", "host_oom", "worker SIGKILL"),
    ("[2026-11-20 10:30:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
     "'--local_rank=0'] exits with return code = -7", "host", "SIGBUS (shared memory)"),
    # fp16 loss scaling that overflowed down to its floor (DeepSpeed), raised as Python's base Exception
    ("Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
     "application", "NaN/Inf loss"),
    # Ray losing a node: its control plane's words and the task's exception
    ("The node with node id: 5f2c9a and address: 10.0.0.7 and node name: 10.0.0.7 has been marked dead because the "
     "detector has missed too many heartbeats from it.", "host", "Node lost"),
    ("ray.exceptions.NodeDiedError: Task failed due to the node dying.", "host", "Node lost"),
    # absl's failure-signal handler (Ray, TensorFlow, JAX)
    ("*** SIGSEGV received at time=1763634600 on cpu 3 ***", "application", "Segmentation fault"),
    # a JAX task whose connection to the coordinator got no answer
    ("jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: failed to connect to all addresses; last error: UNKNOWN: "
     "ipv4:10.0.0.1:8476: Failed to connect to remote host: Timeout occurred: FD Shutdown", "network",
     "JAX coordinator unreachable"),
    # libfabric's EFA provider on its own: a handshake unanswered (a security group without its
    # self-referencing rules), and buffers it could not register (the locked-memory limit)
    ("Error 4126: Unresponsive receiver (reachable by EFA device but handshake failed)", "network",
     "EFA peer unresponsive"),
    ("Libfabric EFA provider has encountered an internal error:\n\nLibfabric error: (-12) Cannot allocate memory\n"
     "EFA internal error: (4112) Failure to post internal receive buffers", "host", "RDMA locked-memory limit"),
    # the HANDLE_ERROR check many CUDA codes copy, with RELION's error number
    ("ERROR: out of memory in /opt/relion/src/acc/acc_backprojector_impl.h at line 37 (error-code 2)", "gpu_oom",
     "CUDA error (out of memory)"),
    ("an illegal memory access was encountered in kernel.cu at line 88", "application",
     "CUDA error (an illegal memory access was encountered)"),
    # PyTorch's warning that cuInit failed on a GPU the job was given
    ("/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:182: UserWarning: CUDA initialization: CUDA driver "
     "initialization failed, you might not have a CUDA gpu. (Triggered internally at /pytorch/c10/cuda/"
     "CUDAFunctions.cpp:109.)", "gpu", "CUDA driver did not start"),
    # HPE PALS unable to set up the launch on the node
    ("launch RPC: Couldn't allocate a port for PMI to use", "host", "PALS launch failed"),
    # Apptainer unable to assemble the container from the node's settings (a narrower cause wins)
    ("FATAL:   container creation failed: mount /run/munge->/run/munge error: while mounting /run/munge: destination "
     "/run/munge doesn't exist in container", "host", "Container creation failed"),
    ("FATAL:   container creation failed: failed to find loop device: no loop devices available", "host",
     "No loop device for the image"),
    # LSF's own reasons for the execution host, its working directory and a forced kill
    ("TERM_ZOMBIE: job exited while LSF is not available.", "host", "LSF host failed"),
    ("TERM_PRE_EXEC_FAIL: job killed after reaching pre-execution retry limit.", "host", "LSF host failed"),
    ("TERM_CWD_NOTEXIST: current working directory not accessible or does not exist on the execution host.",
     "storage", "Working directory missing"),
    ("TERM_FORCE_OWNER: job killed by owner without time for cleanup.", "cancelled", "killed (bkill)"),
    # the Fortran runtimes stopping a program for its own input or code
    ("forrtl: severe (29): file not found, unit 10, file /home/u/input.nml", "application", "Fortran runtime error"),
    ("At line 42 of file main.f90 (unit = 10, file = 'input.dat')\nFortran runtime error: End of file",
     "application", "Fortran runtime error"),
    # Grid Engine refusing the host it was submitted from
    ('Unable to run job: denied: host "login1.example.org" is no submit host.', "host", "Not a submit host"),
    # Grid Engine's shepherd unable to enter the job's working directory, and qacct's record of it
    ("failed changing into working directory:05/02/2012 01:02:47 [21548:26444]: error: can't chdir to "
     "/home/u/run: No such file or directory", "storage", "Working directory missing"),
    ("failed       28  : changing into working directory", "storage", "Working directory missing"),
    # TensorFlow: an input's device copy that could not be allocated; its CUDA diagnostics finding the
    # driver's kernel module and libraries at different versions
    ("tensorflow.python.framework.errors_impl.InternalError: Dst tensor is not initialized.", "gpu_oom", "GPU OOM"),
    ("E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:313] kernel version 515.48.7 does not match DSO version "
     "510.73.5 -- cannot find working devices in this configuration", "host", "NVIDIA driver version mismatch"),
    # the node's NVIDIA container runtime: a toolkit release's own error, the persistence daemon not running
    ("nvidia-container-cli: error parsing IMEX info: unsupported IMEX channel value: all: unknown.", "host",
     "NVIDIA container runtime failed"),
    ("OCI runtime create failed: runc create failed: unable to start container process:\nerror during container "
     "init: failed to fulfil mount request:\nopen /run/nvidia-persistenced/socket: no such file or directory",
     "host", "NVIDIA container runtime failed"),
    # ROCm finding no GPU (PyTorch, XLA) in a job that was given GPUs
    ("RuntimeError: No HIP GPUs are available", "host", "No GPU visible"),
    ("E xla/stream_executor/rocm/rocm_platform.cc:50] failed call to hipInit: HIP_ERROR_NoDevice", "host",
     "No GPU visible"),
    # PyTorch's errors when the job then uses CUDA that would not start (999; 3)
    ("RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env "
     "variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.",
     "gpu", "CUDA error (unknown error)"),
    ("RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.", "gpu",
     "CUDA driver did not start"),
]


@pytest.mark.parametrize(("out", "sub_domain", "code"), MESSAGES, ids=[m[2] + ":" + m[0][:40] for m in MESSAGES])
def test_the_jobs_output_names_the_cause(make_bundle, out, sub_domain, code):
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out + "\n"}, nodes="gpu-02"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == (sub_domain, code)


def test_an_image_built_for_a_newer_cuda_than_the_driver_is_not_the_nodes_container_runtime(make_bundle):
    out = ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver "
           "to a newer version, or use an earlier cuda container: unknown\n")
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-02"))
    assert d["root_cause"]["code"] != "NVIDIA container runtime failed"
    assert d["sub_domain"] == "application"


def test_kernel_tools_missing_in_a_prolog_names_the_node_but_yields_to_a_logged_cause(make_bundle):
    trace = "+ cpupower frequency-set -g performance\nWARNING: cpupower not found for kernel 4.15.0-42\n"
    d = analyze_bundle(make_bundle({"nodes/gpu-02/prolog.log": trace}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("host", ["gpu-02"])
    assert "linux-tools-$(uname -r)" in d["root_cause"]["action"]
    err = "Traceback (most recent call last):\n  File \"train.py\", line 3\nValueError: bad lr\n"
    d = analyze_bundle(make_bundle({"nodes/gpu-02/prolog.log": trace, "app/slurm-4242.out": err}))
    assert d["sub_domain"] == "application"


@pytest.mark.parametrize("call", ["ncclAllReduce", "ncclSend", "ncclCommSplit"])
def test_horovod_naming_the_failed_nccl_call_without_its_arguments_is_decoded_as_nccls_result(make_bundle, call):
    out = f"horovod.common.exceptions.HorovodInternalError: {call} failed: unhandled system error\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-[01-02]"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("network", "ncclSystemError")


@pytest.mark.parametrize("lib", ["libcudart.so.12", "libfftw3.so.3", "libmkl_rt.so.2",
                                 "/opt/conda/envs/x/bin/../lib/./libz.so.1"])
def test_a_toolkit_or_environment_library_missing_is_not_the_nodes_image(make_bundle, lib):
    out = f"python: error while loading shared libraries: {lib}: cannot open shared object file\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-02"))
    assert d["sub_domain"] != "host"


def test_a_kernel_fault_nccl_reports_after_a_failed_transfer_is_that_transfers(make_bundle):
    fault = "gpu-02:35917:35917 [1] init.cu:194 NCCL WARN Cuda failure 'an illegal memory access was encountered'\n"
    ib = ("gpu-02:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, opcode 1, "
          "len 0, vendor err 129\n")
    d = analyze_bundle(make_bundle({"app/out.log": ib + fault}))
    assert d["sub_domain"] == "network"
    # alone, CUDA errors being sticky, it is only a lead towards the job's own kernels
    d = analyze_bundle(make_bundle({"app/out.log": fault}))
    assert (d["sub_domain"], d["evidence_status"]) == ("application", "hypothesis")


def test_an_nccl_error_no_table_knows_is_kept_as_a_symptom(make_bundle):
    line = "gpu-02:35917:35917 [1] init.cu:194 NCCL WARN Cuda failure 'a text no CUDA release prints'\n"
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert d["sub_domain"] == "unknown"
    assert [s["code"] for s in d["symptoms"] if s["kind"] == "nccl_error"] == ["NCCL error"]


def test_an_exception_quoting_a_cuda_error_no_table_knows_keeps_its_own_message(make_bundle):
    line = ("Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n"
            "numba.cuda.cudadrv.driver.CudaAPIError: [999] Call to cuLaunchKernel results in CUDA_ERROR_NEW_KIND\n")
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert d["sub_domain"] == "application"
    assert "Call to cuLaunchKernel results in CUDA_ERROR_NEW_KIND" in d["root_cause"]["explanation"]


def test_a_submission_the_controller_could_not_save_is_its_disk_not_the_jobs_node(make_bundle):
    out = "sbatch: error: Batch job submission failed: I/O error writing script/environment to file\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-02"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("storage", "Controller could not save the job")
    assert d["root_cause"]["nodes"] == [] and "gpu-02" not in d["verdict"]


def test_a_lost_gpus_unknown_error_at_init_is_a_lead_to_the_gpu(make_bundle):
    d = analyze_bundle(make_bundle({"app/out.log": "cuInit returned error 999 CUDA_ERROR_UNKNOWN\n"}, nodes="gpu-02"))
    assert (d["sub_domain"], d["evidence_status"], d["root_cause"]["nodes"]) == ("gpu", "hypothesis", ["gpu-02"])


def test_a_queue_the_adapter_could_not_create_is_the_locked_memory_limit_of_the_host_ucx_names(make_bundle):
    ucx = ("[1652739463.054681] [gpu-01:4071024:0]        ib_iface.c:1035 UCX  ERROR ibv_create_cq(cqe=4096) failed: "
           "Cannot allocate memory\n")
    d = analyze_bundle(make_bundle({"app/out.log": ucx}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
        "host", "RDMA locked-memory limit", ["gpu-01"])
    # a large buffer's registration may run out of the adapter's entries instead: not that verdict
    reg = ucx.replace("ib_iface.c:1035", "ib_md.c:325").replace(
        "ibv_create_cq(cqe=4096)", "ibv_reg_mr(address=0xabcf12c0, length=26400, access=0xf)")
    d = analyze_bundle(make_bundle({"app/out.log": reg}))
    assert d["root_cause"] is None or d["root_cause"]["code"] != "RDMA locked-memory limit"


def test_an_adapter_that_cannot_be_opened_for_memory_is_out_of_doorbell_pages_not_locked_memory(make_bundle):
    ucx = ("[1608298882.555115] [gpu-01:54275:0]          ib_md.c:1678 UCX  ERROR ibv_open_device(mlx5_0) failed: "
           "Cannot allocate memory\n")
    kernel = ("[2605244.823409] mlx5_core 0000:61:00.0: mlx5_cmd_check:795:(pid 53945): ALLOC_UAR(0x802) op_mod(0x0) "
              "failed, status limits exceeded(0x8), syndrome (0x5a7939)\n")
    no_res = kernel.replace("ALLOC_UAR(0x802)", "CREATE_QP(0x500)").replace("limits exceeded(0x8)",
                                                                            "no resources(0xf)")
    for files in ({"app/out.log": ucx}, {"app/out.log": ucx, "nodes/gpu-01/dmesg": kernel},
                  {"nodes/gpu-01/dmesg": kernel}, {"nodes/gpu-01/dmesg": no_res}):
        d = analyze_bundle(make_bundle(files))
        assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
            "network", "HCA resources exhausted", ["gpu-01"]), files
    assert "mlx5_core 0000:61:00.0 on gpu-01 refused CREATE_QP (status no resources)" in d["root_cause"]["explanation"]
    # another adapter's driver failing to open is not told about mlx5 doorbell pages
    d = analyze_bundle(make_bundle({"app/out.log": ucx.replace("mlx5_0", "efa_0")}))
    assert (d["root_cause"] or {}).get("code") != "HCA resources exhausted"


def test_a_queue_pair_whose_peer_address_timed_out_is_a_lead_to_nccls_fabric_settings(make_bundle):
    line = ("gpu-01:76786:77145 [3] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with 110 Connection "
            "timed out, on dev mlx5_3:1, curr state INIT, next state RTR, local GID index 3\n")
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert (d["sub_domain"], d["evidence_status"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
        "application", "hypothesis", "IB queue pair address unreachable", ["gpu-01"])
    # a port the node logged going down is the better explanation
    down = "Nov 20 10:30:00 gpu-01 kernel: mlx5_core 0000:5e:00.0: Link is Down\n"
    d = analyze_bundle(make_bundle({"app/out.log": line, "nodes/gpu-01/syslog": down}))
    assert d["sub_domain"] == "network"


def test_a_queue_pair_whose_device_is_gone_is_a_lead_to_the_network(make_bundle):
    line = "gpu-01:76786:77145 [3] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error No such device\n"
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert (d["sub_domain"], d["evidence_status"], d["root_cause"]["nodes"]) == ("network", "hypothesis", ["gpu-01"])


def test_an_mpi_rank_killed_with_sigkill_points_at_the_oom_killer_even_quoted_without_its_banner(make_bundle):
    banner = ("===================================================================================\n"
              "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
              "=   RANK 3 PID 4110 RUNNING AT gpu-02\n"
              "=   KILLED BY SIGNAL: 9 (Killed)\n"
              "===================================================================================\n")
    for out in (banner, "KILLED BY SIGNAL: 9 (Killed)\n"):
        d = analyze_bundle(make_bundle({"app/out.log": out}))
        assert (d["sub_domain"], d["evidence_status"]) == ("host_oom", "hypothesis"), out


def test_nvml_saying_gpu_is_lost_through_any_client_is_the_gpu_of_that_node(make_bundle):
    plugin = ("Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: unable to get device "
              "link information: failed to get nvlink remote pci info: failed to get nvlink state: GPU is lost, which "
              "is unexpected\n")
    for where, text in (("nodes/gpu-02/kubelet.log", plugin),
                        ("app/out.log", "pynvml.NVMLError_GPUIsLost: GPU is lost\n")):
        d = analyze_bundle(make_bundle({where: text}, nodes="gpu-02"))
        assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == ("gpu", "GPU lost", ["gpu-02"])


def test_cuda_errors_after_an_out_of_memory_are_its_cascade(make_bundle):
    out = "".join(f'ERROR: CUDA RT call "{call}" in line {n} of file jacobi.cpp failed with {text}.\n' for call, n, text in (
        ("cudaMalloc(&a_new, nx * ny * sizeof(real))", 378, "out of memory (2)"),
        ("cudaMemset(a_new, 0, nx * ny * sizeof(real))", 381, "invalid argument (1)"),
        ("cudaDeviceSynchronize()", 385, "an illegal memory access was encountered (700)")))
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] == "gpu_oom"


@pytest.mark.parametrize("line", [
    # the BFC allocator saying the caller retries
    "W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator (GPU_0_bfc) ran out of memory trying to "
    "allocate 2.20GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean "
    "that there could be performance gains if more memory were available.",
    # a tensor TensorFlow could not place in host memory
    "ResourceExhaustedError: OOM when allocating tensor with shape[5760,4,4,2048] and type float on "
    "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu",
], ids=["bfc-not-a-failure", "tf-cpu-tensor"])
def test_what_is_not_a_failed_device_allocation_is_not_a_gpu_oom(make_bundle, line):
    d = analyze_bundle(make_bundle({"app/out.log": line + "\n"}))
    assert d["sub_domain"] != "gpu_oom"


def test_nccl_given_a_link_local_interface_is_its_setting_but_infinibands_link_local_gids_are_not(make_bundle):
    using = ("gpu-01:83:83 [0] NCCL INFO NET/Socket : Using [0]enp73s0:10.1.216.156<0> "
             "[1]pod-id-link0:169.254.170.23<0>\n")
    d = analyze_bundle(make_bundle({"app/out.log": using}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
        "application", "NCCL on a link-local address", ["gpu-01"])
    assert "pod-id-link0" in d["verdict"]
    ib = ("gpu-01:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
          "fe80::966d:ae03:8b:df78%ib0<53249> with error 4, opcode 32564, len 32564, vendor err 81 (Send)\n")
    d = analyze_bundle(make_bundle({"app/out.log": ib}))
    assert d["sub_domain"] == "network"


def test_a_job_that_ran_out_of_time_after_nccls_socket_to_a_peer_timed_out_hung_on_it(make_bundle):
    out = ("gpu-02:83:2526 [0] misc/socket.cc:503 NCCL WARN Net : Call to recv from 10.0.0.1<41468> failed : "
           "Connection timed out\n"
           "slurmstepd: error: *** JOB 4242 ON gpu-01 CANCELLED AT 2026-11-20T10:59:00 DUE TO TIME LIMIT ***\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}, state="TIMEOUT", exit_code="0:15"))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
        "network", "NCCL socket timeout", ["gpu-02"])
    # in a job that failed by itself it is only a lead
    d = analyze_bundle(make_bundle({"app/out.log": out.splitlines()[0] + "\n"}))
    assert (d["sub_domain"], d["evidence_status"]) == ("network", "hypothesis")


def test_a_program_open_mpi_could_not_run_on_one_node_after_others_started_is_that_nodes_file_system(make_bundle):
    def message(rank: int) -> str:
        return ("mpirun was unable to launch the specified application as it could not access\n"
                "or execute an executable:\n\nExecutable: /scratch/u/run/model.exe\nNode: gpu-02\n\n"
                f"while attempting to start process rank {rank}.\n")
    d = analyze_bundle(make_bundle({"app/out.log": message(288)}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
        "storage", "Program missing on a node", ["gpu-02"])
    # the first rank: the path itself is wrong
    d = analyze_bundle(make_bundle({"app/out.log": message(0)}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("application", "exec failed")


def test_a_segfault_of_the_jobs_process_is_a_lead_to_its_code_that_a_node_fault_outranks(make_bundle):
    crash = ("[gpu-01:5665 :0:5665] Caught signal 11 (Segmentation fault: address not mapped to object at address "
             "(nil))\n")
    nccl = ("gpu-01:5665:5801 [2] proxy.cc:1521 NCCL WARN [Proxy Service 2] Failed to execute operation Connect "
            "from rank 2, retcode 3\n")
    d = analyze_bundle(make_bundle({"app/out.log": nccl + crash}))
    assert (d["sub_domain"], d["evidence_status"], d["root_cause"]["code"]) == (
        "application", "hypothesis", "Segmentation fault")
    xid = "Nov 20 10:30:00 gpu-01 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=5665, GPU has fallen off the bus.\n"
    d = analyze_bundle(make_bundle({"app/out.log": crash, "nodes/gpu-01/syslog": xid}))
    assert d["sub_domain"] == "gpu"


def test_no_gpu_visible_after_one_fell_off_the_bus_is_that_gpu(make_bundle):
    out = "RuntimeError: No CUDA GPUs are available\n"
    xid = "Nov 20 10:30:00 gpu-01 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=5665, GPU has fallen off the bus.\n"
    d = analyze_bundle(make_bundle({"app/out.log": out, "nodes/gpu-01/syslog": xid}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("gpu", ["gpu-01"])


@pytest.mark.parametrize("line", ["RuntimeError: No CUDA GPUs are available",
                                  "CUDA error: no CUDA-capable device is detected",
                                  "RuntimeError: No HIP GPUs are available"])
def test_no_gpu_visible_to_a_job_given_no_gpus_is_its_request(make_bundle, line):
    given = analyze_bundle(make_bundle({"app/out.log": line + "\n"}))
    assert (given["sub_domain"], given["outcome"]) == ("host", "infrastructure")
    none = analyze_bundle(make_bundle({"app/out.log": line + "\n"}, gpus_per_node=0))
    assert (none["sub_domain"], none["outcome"], none["root_cause"]["code"]) == (
        "application", "application", "No GPU visible")
    assert "allocation held none" in none["verdict"]
    assert "driver" not in none["root_cause"]["explanation"]


def test_a_step_slurmd_could_not_lay_out_on_the_nodes_cpus_is_a_lead_to_that_node(make_bundle):
    out = ("srun: error: Task launch for StepId=4242.4 failed on node gpu-01: Unable to layout tasks on given cpus\n"
           "srun: error: Application launch failed: Unable to layout tasks on given cpus\n"
           "srun: error: gpu-02: tasks 21-79: Killed\n")
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}))
    assert (d["sub_domain"], d["evidence_status"], d["root_cause"]["nodes"]) == ("host", "hypothesis", ["gpu-01"])


@pytest.mark.parametrize("line", [
    # device memory, in the types Thrust throws
    "terminate called after throwing an instance of 'thrust::system::detail::bad_alloc'\n"
    "  what():  std::bad_alloc: cudaErrorMemoryAllocation: out of memory",
    # pinned memory for the adapter: the locked-memory limit, not the job's RAM
    "Call to ibv_reg_mr failed with error Cannot allocate memory",
    # PyTorch's shared-memory files in /dev/shm
    "RuntimeError: unable to mmap 1024 bytes from file </torch_1234_5678>: Cannot allocate memory (12)",
    # a libfabric provider registering memory with the adapter
    "libfabric:1234:1701388800::efa:ep_ctrl:rxr_ep_ctrl():1234<warn> Error: Cannot allocate memory",
], ids=["thrust", "verbs", "torch-shm", "libfabric"])
def test_memory_that_is_not_the_hosts_ram_is_not_a_host_oom(make_bundle, line):
    d = analyze_bundle(make_bundle({"app/out.log": line + "\n"}))
    assert d["sub_domain"] != "host_oom"


def test_rmms_pinned_host_pool_running_out_is_not_the_gpus_memory(make_bundle):
    line = ("MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/opt/conda/include/rmm/mr/host/"
            "pinned_memory_resource.hpp:90: Maximum pool size exceeded\n")
    d = analyze_bundle(make_bundle({"app/out.log": line}))
    assert d["sub_domain"] != "gpu_oom"


def test_librdmacm_finding_no_adapter_on_a_host_without_one_is_not_a_network_fault(make_bundle):
    # printed by every MPI process that loads librdmacm on an Ethernet-only host; the crash is the job's
    out = "CMA: no RDMA devices found\n[gpu-02:12597] Signal: Segmentation fault (11)\n"
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] != "network"


def test_an_mpi_type_slurm_does_not_offer_is_the_jobs_request(make_bundle):
    out = "srun: error: invalid MPI type 'pmix', --mpi=list for acceptable types\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-02"))
    assert d["sub_domain"] == "application"


@pytest.mark.parametrize("out", [
    "  File \"/home/u/run.py\", line 8, in <module>\n    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
    "BlockingIOError: [Errno 11] Resource temporarily unavailable",
    "OSError: Unable to open file (unable to lock file, errno = 11, error message = 'Resource temporarily "
    "unavailable')",
], ids=["flock-held", "hdf5-held"])
def test_a_lock_another_process_holds_is_the_jobs_contention_not_the_file_system(make_bundle, out):
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out + "\n"}, nodes="gpu-02"))
    assert d["sub_domain"] == "application"


def test_an_oom_kill_slurm_reports_after_the_cancel_it_brought_about_is_the_cause(make_bundle):
    out = ("Processing reference #84\n"
           "slurmstepd: *** JOB 4242 CANCELLED AT 2026-11-20T10:58:00 *** on gpu-02\n"
           "slurmstepd: Exceeded step memory limit at some point. oom-killer likely killed a process.\n")
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-02", state="CANCELLED",
                                   exit_code="0:15"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host_oom", "cgroup OOM")


def test_a_session_directory_open_mpi_could_not_create_is_that_nodes_file_system_even_when_the_job_then_hung(make_bundle):
    out = ("[gpu-02.cluster.example:31532] opal_os_dirpath_create: Error: Unable to create the sub-directory "
           "(/tmp/openmpi-sessions-u@gpu-02_0/2243) of (/tmp/openmpi-sessions-u@gpu-02_0/2243/0/7), mkdir failed [1]\n"
           "[gpu-02.cluster.example:31532] [[2243,0],7] ORTE_ERROR_LOG: Error in file util/session_dir.c at line 106\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
        "storage", "MPI session directory failed", ["gpu-02"])
    # mpirun waits for the daemon that never reported: the limit is the consequence
    d = analyze_bundle(make_bundle({"app/out.log": out}, state="TIMEOUT", exit_code="0:15"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("storage", "MPI session directory failed")


def test_a_library_of_mpi_itself_missing_on_a_remote_node_is_the_jobs_environment(make_bundle):
    out = "orted: error while loading shared libraries: libopen-rte.so.40: cannot open shared object file\n"
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] == "application"


def test_a_tcp_connection_reset_by_a_dead_peer_is_not_the_network(make_bundle):
    out = ("[gpu-01][[4567,1],0][btl_tcp_frag.c:215:mca_btl_tcp_frag_recv] mca_btl_tcp_frag_recv: readv failed: "
           "Connection reset by peer (104)\n"
           "mpirun noticed that process rank 7 with PID 1234 on node gpu-02 exited on signal 11 (Segmentation fault).\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] == "application"
    # timed out instead: the packets between the nodes stopped
    timed_out = out.splitlines()[0].replace("Connection reset by peer (104)", "Connection timed out (110)")
    d = analyze_bundle(make_bundle({"app/out.log": timed_out + "\n"}))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("network", "MPI TCP connection timed out")


_RULE = "-" * 74


@pytest.mark.parametrize("field", ["  Local host:        gpu-02.local", "    Host:          gpu-02"])
def test_an_open_mpi_help_message_names_its_node_in_a_field_of_its_own(make_bundle, field):
    out = "\n".join([_RULE, "The OpenFabrics stack has reported a network error event.  Open MPI",
                     "will try to continue, but your job may end up failing.", field,
                     "  MPI process PID:   11840", "  Error number:      10 (IBV_EVENT_PORT_ERR)", _RULE, ""])
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("network", ["gpu-02"])


@pytest.mark.parametrize("out", [
    # the peer's field is not the node that saw the error
    [_RULE, "  Error number:      10 (IBV_EVENT_PORT_ERR)", "  Remote host:       gpu-02", _RULE],
    # a field outside the message the line is in belongs to another message
    [_RULE, "  Local host:        gpu-02", _RULE, "  Error number:      10 (IBV_EVENT_PORT_ERR)", _RULE],
    # no closing rule: not a help message
    [_RULE, "  Error number:      10 (IBV_EVENT_PORT_ERR)", "  Local host:        gpu-02"],
])
def test_a_host_field_outside_the_lines_own_help_message_names_no_node(make_bundle, out):
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": "\n".join(out) + "\n"}))
    assert d["sub_domain"] == "network"
    assert d["root_cause"]["nodes"] == []


def test_a_topology_warning_does_not_outweigh_the_jobs_own_error(make_bundle):
    out = ("* hwloc 2.0.4 received invalid information from the operating system.\n"
           "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
           "ValueError: shapes (3,) and (4,) not aligned\n")
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-02"))
    assert d["sub_domain"] == "application"


def test_psm_names_the_node_its_adapter_is_missing_on(make_bundle):
    out = ("gpu-02.cluster.edu.7384ipath_wait_for_device: The /dev/ipath device failed to appear after 30.0 seconds: "
           "Connection timed out\n")
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}))
    assert (d["root_cause"]["code"], d["root_cause"]["nodes"]) == ("PSM adapter missing", ["gpu-02"])
    # contexts taken by the job's own concurrent runs are not the node's
    out = "gpu-02.23245ipath_userinit: assign_context command failed: Network is down\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}))
    assert d["sub_domain"] != "host"


def test_the_runtimes_tcp_help_message_as_printed_names_the_network_and_its_node(make_bundle):
    # PRRTE's and ORTE's help text breaks its first line after `connection`
    out = "\n".join(["-" * 60, "A process or daemon was unable to complete a TCP connection", "to another process:",
                     "  Local host:    gpu-02", "  Remote host:   10.104.5.40",
                     "This is usually caused by a firewall on the remote host. Please",
                     "check that any firewall (e.g., iptables) has been disabled and", "try again.", "-" * 60, ""])
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
        "network", "MPI TCP connect failed", ["gpu-02"])


def _help(*lines: str) -> str:
    return "\n".join([_RULE, *lines, _RULE, ""])


@pytest.mark.parametrize(("first", "second"), [
    ("The InfiniBand retry count between two MPI processes has been", 'exceeded.  "Retry count" is defined in the'),
    ('The OpenFabrics "receiver not ready" retry count on a per-peer', "connection between two MPI processes has been"),
    ('The OpenFabrics "receiver not ready" retry count on a shared receive', "queue or XRC receive queue has been"),
])
def test_open_mpis_help_for_a_transfer_out_of_retries_is_the_fabric_at_the_host_it_names(make_bundle, first, second):
    out = _help(first, second, "  Local host:   gpu-02", "  Local device: mlx4_0", "  Peer host:    gpu-01")
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (
        "network", "IB completion error", ["gpu-02"])


def test_an_adapter_with_every_port_down_is_that_nodes_link_but_not_over_the_jobs_own_error(make_bundle):
    ports = _help("WARNING: There is at least non-excluded one OpenFabrics device found,",
                  "but there are no active ports detected (or Open MPI was unable to use",
                  "them).  This is most certainly not what you wanted.  Check your", "  Local host: gpu-02")
    unreachable = _help("At least one pair of MPI processes are unable to reach each other for",
                        "  Process 1 ([[5442,1],0]) is on host: gpu-01", "  Process 2 ([[5442,1],1]) is on host: gpu-02")
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": ports + unreachable}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == ("network", "IB port down", ["gpu-02"])
    # on a node with an unused adapter the warning is printed before every run
    error = "Traceback (most recent call last):\n  File \"solve.py\", line 9, in <module>\nKeyError: 'dt'\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": ports + error}))
    assert d["sub_domain"] == "application"


@pytest.mark.parametrize(("file", "sub_domain", "code"), [
    ("/dev/shm/vader_segment.gpu-02.53e60001.0", "host", "/dev/shm full"),
    ("/tmp/openmpi-sessions-u@gpu-02_0/3562/1/shared_mem_pool.gpu-02", "storage", "MPI session directory failed"),
])
def test_no_room_for_open_mpis_shared_memory_file_is_the_file_system_it_is_in(make_bundle, file, sub_domain, code):
    out = _help(f"It appears as if there is not enough space for {file} (the shared-memory backing",
                "file). It is likely that your MPI job will now either abort or experience",
                "  Local host:  gpu-02", "  Space Requested: 4194312 B", "  Space Available: 0 B")
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (sub_domain, code, ["gpu-02"])


@pytest.mark.parametrize("out", [
    "Permission denied (publickey,password).",  # a key the user has not set up
    "[gpu-02:12345] Read -1, expected 65536, errno = 14",  # a bad address, not the ptrace setting
])
def test_what_only_resembles_a_nodes_setting_is_not_the_node(make_bundle, out):
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out + "\n"}))
    assert d["sub_domain"] != "host"


_HYDRA_RULE = "=" * 83

# (output, the job's nodes, sub_domain, root cause code, the node it names) in a multi-node job: the
# node comes from the message itself, a field of it, or the launcher's prefix.
NAMED_NODE_MESSAGES = [
    (_help("WARNING: It appears that your OpenFabrics subsystem is configured to only",
           "allow registering part of your physical memory.  This can cause MPI jobs to",
           "  Local host:              gpu-02", "  Registerable memory:     32768 MiB"),
     "gpu-[01-02]", "host", "RDMA registerable memory limited", "gpu-02"),
    ("mpirun noticed that process rank 5 with PID 31337 on node gpu-02 exited on signal 7 (Bus error).\n",
     "gpu-[01-02]", "host", "SIGBUS (shared memory)", "gpu-02"),
    ("ssh: connect to host gpu-02 port 22: No route to host\n", "gpu-[01-02]", "host", "Node unreachable", "gpu-02"),
    # NCI's PBS hook killing a job over one node's share of its memory (the node by its full name)
    ("Job 457501 has exceeded memory allocation on node gpu-02.gadi.nci.org.au\n"
     "Memory Requested:   3.38TB                Memory Used: 2.76TB\n", "gpu-[01-02]", "host_oom", "memory limit",
     "gpu-02"),
    ("gpu-02:2712:2712 [0] include/socket.h:344 NCCL WARN Socket creation failed : Address family not supported "
     "by protocol\n", "gpu-[01-02]", "host", "NCCL socket family unsupported", "gpu-02"),
    # torchrun's failure table names the host of the worker that died
    ("Root Cause (first observed failure):\n[0]:\n  time      : 2026-11-20_10:30:00\n  host      : gpu-02\n"
     "  rank      : 3 (local_rank: 1)\n  exitcode  : -7 (pid: 4711)\n",
     "gpu-[01-02]", "host", "SIGBUS (shared memory)", "gpu-02"),
    # the same entry with its lines joined by a log shipper
    ("  | 2026-11-20T10:30:00.879Z | [3]: time : 2026-11-20_10:30:00 host : gpu-02 rank : 3 (local_rank: 1) "
     "exitcode : -7 (pid: 4711) error_file: <N/A> traceback : Signal 7 (SIGBUS) received by PID 4711\n",
     "gpu-[01-02]", "host", "SIGBUS (shared memory)", "gpu-02"),
    # MPICH's Hydra frames its report of a dead rank in rules of `=`
    ("\n".join([_HYDRA_RULE, "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
                "=   PID 28219 RUNNING AT gpu-02", "=   RANK 0 PID 28219 RUNNING AT gpu-02",
                "=   KILLED BY SIGNAL: 7 (Bus error)", _HYDRA_RULE, ""]),
     "gpu-[01-02]", "host", "SIGBUS (shared memory)", "gpu-02"),
    # Cray's ALPS names the node by its number
    ("  [NID 00151] 2026-11-20 10:40:14 Apid 121706: initiated application termination\n"
     "  [NID 00151] 2026-11-20 10:41:17 Apid 121706: OOM killer terminated this process.\n"
     "  Application 121706 exit signals: Killed\n", "nid00151,nid00152", "host_oom", "OOM kill", "nid00151"),
    ("srun: error: slurm_receive_msgs: [[gpu-02.cluster]:6818] failed: Socket timed out on send/recv operation\n",
     "gpu-[01-02]", "host", "slurmd not answering", "gpu-02"),
]


@pytest.mark.parametrize(("out", "nodes", "sub_domain", "code", "node"), NAMED_NODE_MESSAGES,
                         ids=[m[3] + ":" + m[0].strip()[:40] for m in NAMED_NODE_MESSAGES])
def test_a_message_that_names_its_node_blames_that_node(make_bundle, out, nodes, sub_domain, code, node):
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes=nodes))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == (sub_domain, code, [node])


def test_a_launch_a_parent_could_not_forward_is_the_child_nodes(make_bundle):
    out = ("launch failed on x3104c0s1b0n0: Couldn't forward RPC launch(ab751d77) to child "
           "x3104c0s31b0n0.hsn.cm.polaris.alcf.anl.gov: Resource temporarily unavailable\n")
    d = analyze_bundle(make_bundle({"app/job.err": out}, nodes="x3104c0s[1,31]b0n0"))
    assert d["sub_domain"] == "host"
    assert d["root_cause"]["nodes"] == ["x3104c0s31b0n0"]


def test_nvidia_smi_seeing_no_gpu_gives_way_to_the_jobs_own_error(make_bundle):
    """A script may print nvidia-smi's view without using a GPU: its own failure outranks it."""
    out = "No devices were found\nTraceback (most recent call last):\n  File \"prep.py\", line 3, in <module>\n" \
          "ValueError: bad column 'x'\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-02"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("application", "ValueError")
    assert "No GPU visible" in [s["code"] for s in d["symptoms"]]


def test_an_adapter_event_that_is_not_an_error_is_not_a_network_lead(make_bundle):
    out = "[1643025432.789437] [gpu-02:12345:0]       ib_device.c:468  UCX  DIAG  IB Async event on mlx5_0: port " \
          "active on port 1\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-02"))
    assert d["sub_domain"] != "network"


def test_a_corrupted_inforom_warning_alone_is_not_a_lead(make_bundle):
    """nvidia-smi repeats the warning on every call while the GPU works: context, not a cause."""
    out = "WARNING: infoROM is corrupted at gpu 0000:02:00.0\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-02"))
    assert d["sub_domain"] != "gpu"


@pytest.mark.parametrize("line", [
    # a flushed request only follows the error that moved its queue to the error state
    "libfabric:3522:1640000000::verbs:core:vrb_cq_read():109<warn> Work completion status: Work Request Flushed Error",
    # a container's rdma-core probing for providers the node has no adapter for
    "libibverbs: Warning: couldn't load driver 'libhfi1verbs-rdmav34.so': libhfi1verbs-rdmav34.so: cannot open "
    "shared object file: No such file or directory",
    # Hydra passing on a rank's exit status: the rank's own error says why
    "[mpiexec@gpu-01] wait_proxies_to_terminate (../../../../../src/pm/i_hydra/mpiexec/intel/i_mpiexec.c:537): "
    "downstream from host gpu-02 exited with status 1",
    # a PMIx exchange that timed out: a rank that never reached it looks the same
    "slurmstepd: error:  mpi/pmix_v4: pmixp_coll_ring_reset_if_to: gpu-02 [1]: pmixp_coll_ring.c:742: "
    "0x7f3a5c03b6e0: collective timeout seq=0",
    # MPICH refusing a transfer the program asked for wrongly
    "MPIDI_OFI_send_normal(370): OFI tagged send failed (ofi_send.h:370:MPIDI_OFI_send_normal:Invalid argument)",
])
def test_fabric_library_noise_is_not_a_lead(make_bundle, line):
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": line + "\n"}, nodes="gpu-02"))
    assert d["sub_domain"] not in ("network", "host")


# PyTorch's watchdog stuck behind a blocked CUDA/NCCL call: a peer or the GPU stopped, so the exit code
# says nothing about why (as a watchdog timeout).
@pytest.mark.parametrize("out", [
    "[rank3]:[E1120 10:20:00.123456 2345 ProcessGroupNCCL.cpp:1414] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
    "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.",
    "[rank3]:[F1120 10:28:00.123456 2345 ProcessGroupNCCL.cpp:1224] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
    "Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.",
])
def test_a_stuck_nccl_watchdog_leaves_the_cause_open(make_bundle, out):
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out + "\n"}, nodes="gpu-[01-02]"))
    assert d["sub_domain"] == "unknown"  # not the exit code's "the job's own code"
    assert "NCCL heartbeat timeout" in [s["code"] for s in d["symptoms"]]


# JAX's coordination service losing a task or its leader: kept as that symptom, below any cause.
@pytest.mark.parametrize(("out", "code"), [
    ("E1120 10:20:00.123456 12345 coordination_service.cc:671] /job:jax_worker/replica:0/task:3 has been set to ERROR "
     "in coordination service: DEADLINE_EXCEEDED: Task /job:jax_worker/replica:0/task:3 heartbeat timeout. This "
     "indicates that the remote task has failed, got preempted, or crashed unexpectedly.", "JAX task lost"),
    ("F1120 10:20:00.123456 12345 client.h:77] Terminating process because the JAX distributed service detected "
     "fatal errors. This most likely indicates that another task died; see the other task logs for more details.",
     "JAX task lost"),
    ("E1120 10:20:00.123456 12345 coordination_service_agent.cc:380] Failed to send RPC to coordination service. "
     "Either the leader task was preempted/died/restarted unexpectedly or this task is experiencing network issues.",
     "JAX coordinator lost"),
])
def test_jax_losing_a_task_is_a_symptom_of_what_ended_it(make_bundle, out, code):
    oom = "slurmstepd: error: Detected 1 oom_kill event in StepId=4242.0. Some of the step tasks have been OOM Killed.\n"
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out + "\n" + oom}, nodes="gpu-[01-02]"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host_oom", "cgroup OOM")
    assert code in [s["code"] for s in d["symptoms"]]


@pytest.mark.parametrize(("msg", "code"), [
    ("DEADLINE_EXCEEDED: Barrier timed out. Id: PjRT_Client_Connect. This usually happens because a task triggered "
     "the barrier too early or too slowly.", "JAX barrier timeout"),
    ("UNAVAILABLE: failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.1:8476: Failed to connect to "
     "remote host: Connection refused", "JAX coordinator refused"),
])
def test_a_jax_task_waiting_for_the_others_is_not_the_cause(make_bundle, msg, code):
    out = ('Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n'
           f"    jax.distributed.initialize()\njaxlib._jax.XlaRuntimeError: {msg}\n")
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-[01-02]"))
    assert d["root_cause"]["code"] != code
    assert code in [s["code"] for s in d["symptoms"]]


def test_a_log_field_holding_an_exceptions_repr_is_not_the_exception(make_bundle):
    # dask's `Compute Failed` block names the task's exception in a field of its own
    out = ("2026-11-20 10:30:00,000 - distributed.worker - WARNING - Compute Failed\nKey:       ('rechunk', 0)\n"
           "Function:  shuffle_unpack\nargs:      ('5971f6e5', (0, 6, 0), 1)\nkwargs:    {}\n"
           "Exception: \"RuntimeError('P2P shuffling 5971f6e5 failed during unpack phase')\"\n")
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-02"))
    assert "python_exception" not in [s["kind"] for s in d["symptoms"]]
    # while Python's own base class, raised by the job, is its exception
    raised = analyze_bundle(make_bundle({"app/slurm-4242.out": "Exception: no input files under /data/run7\n"},
                                        nodes="gpu-02"))
    assert raised["root_cause"]["kind"] == "python_exception"


@pytest.mark.parametrize("exc", [
    "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
    "ray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this task. Check "
    "python-core-worker-*.log files for more information.",
])
def test_a_ray_worker_that_died_unexpectedly_is_a_symptom_of_what_killed_it(make_bundle, exc):
    out = ("(raylet) node_manager.cc:3040: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers "
           "crashed due to other reasons at node (ID: 2a3b, IP: 10.0.0.5) over the last time period.\n"
           f'Traceback (most recent call last):\n  File "run.py", line 3, in <module>\n{exc}\n')
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": out}, nodes="gpu-02"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host_oom", "Ray OOM kill")
    assert "Ray worker died" in [s["code"] for s in d["symptoms"]]
    alone = analyze_bundle(make_bundle({"app/slurm-4242.out": out.split("\n", 1)[1]}, nodes="gpu-02"))
    assert alone["root_cause"]["code"] != "Ray worker died"


@pytest.mark.parametrize(("out", "sub_domain"), [
    # HTCondor's out-of-memory hold names the machine of the slot
    ("012 (4242.000.000) 2026-11-20 10:30:00 Job was held.\n"
     "\tError from slot1_1@gpu-02: Job has encountered an out-of-memory event.\n", "host_oom"),
    # PBS ending a job because a sister node's MOM went away names that node
    ("=>> PBS: job killed: node 1 (gpu-02) requested job terminate, 'EOF' (code 1099) - received SISTER_EOF "
     "attempting to communicate with sister MOM's\n", "host"),
])
def test_another_schedulers_message_names_the_node_it_blames(make_bundle, out, sub_domain):
    d = analyze_bundle(make_bundle({"app/job.log": out}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == (sub_domain, ["gpu-02"])


def test_torques_server_failing_to_look_up_the_user_is_the_user_database_not_the_job(make_bundle):
    d = analyze_bundle(make_bundle({
        "app/qsub.err": "qsub: cannot connect to server cluster (errno=15008) trqauthd unable to authenticate. "
                        "User or PID of calling process not found or does not match\n",
        "controller/trqauthd.log": "2026-11-20 10:05:00.2733 UID 1057 returned NULL from getpwuid\n"},
        exit_code="1:0"))
    assert (d["sub_domain"], d["root_cause"]["code"]) == ("host", "User unknown on the node")
    assert "uid 1057" in d["root_cause"]["explanation"]


def test_a_config_files_path_is_named_in_the_verdict(make_bundle):
    d = analyze_bundle(make_bundle({"app/out.log": 'slurmd: error: s_p_parse_file: unable to read '
                                                   '"/etc/slurm/cgroup.conf": Permission denied\n'}))
    assert "/etc/slurm/cgroup.conf" in d["root_cause"]["explanation"]
    assert "(Permission denied)" in d["root_cause"]["explanation"]


def test_a_stalled_bucket_transfer_is_only_a_lead_that_the_jobs_own_error_outranks(make_bundle):
    out = ("W0000 00:00:1715498963.019816  583764 curl_transport.cc:444] Error [56]=Failure when receiving data "
           "from the peer in curl operation\n"
           "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
           "ValueError: batch size 12 is not divisible by 8 devices\n")
    d = analyze_bundle(make_bundle({"app/out.log": out}))
    assert d["sub_domain"] == "application"
    assert any(s["code"] == "Object storage transfer failed" for s in d["symptoms"])


@pytest.mark.parametrize("line", [
    "OSError: [Errno 30] Read-only file system: '/opt/conda/lib/python3.11/site-packages/triton/cache'",
    "touch: cannot touch '/usr/local/share/x': Read-only file system",
    "mkdir: cannot create directory '/cvmfs/sft.cern.ch/out': Read-only file system",
])
def test_writing_into_the_software_tree_or_an_image_is_the_jobs_mistake_not_the_storage(make_bundle, line):
    d = analyze_bundle(make_bundle({"app/out.log": line + "\n"}))
    assert d["sub_domain"] == "application"
    assert d["root_cause"]["code"] != "EROFS"


def test_a_read_only_remount_in_the_kernel_log_names_the_node_of_the_jobs_erofs(make_bundle):
    kern = ("2026-11-20T10:10:00+00:00 gpu-02 kernel: EXT4-fs error (device nvme0n1p1): ext4_journal_check_start:83: "
            "comm python: Detected aborted journal\n"
            "2026-11-20T10:10:00+00:00 gpu-02 kernel: EXT4-fs (nvme0n1p1): Remounting filesystem read-only\n")
    d = analyze_bundle(make_bundle({"app/out.log": "OSError: [Errno 30] Read-only file system: '/tmp/u/x'\n",
                                    "nodes/gpu-02/kern.log": kern}))
    assert (d["sub_domain"], d["root_cause"]["nodes"]) == ("storage", ["gpu-02"])


@pytest.mark.parametrize(("line", "node"), [
    ("The self-hosted runner: gpu-02 lost communication with the server. Verify the machine is running and has a "
     "healthy network connection.", "gpu-02"),
    ('Cannot contact gpu-02: hudson.remoting.ChannelClosedException: Channel "hudson.remoting.Channel@12972753:JNLP4-'
     'connect connection from 10.64.193.57/10.64.193.57:34306": Remote call on JNLP4-connect connection from '
     '10.64.193.57/10.64.193.57:34306 failed. The channel is closing down or has closed down', "gpu-02"),
    ("Caused: java.io.IOException: Backing channel 'gpu-02' is disconnected.", "gpu-02"),
])
def test_a_ci_service_losing_its_runner_is_that_machine(make_bundle, line, node):
    d = analyze_bundle(make_bundle({"app/console.log": "[ 28%] Building CXX object core/x.cpp.o\n" + line + "\n"}))
    assert (d["sub_domain"], d["root_cause"]["code"], d["root_cause"]["nodes"]) == ("host", "CI runner lost", [node])


@pytest.mark.parametrize("line", [
    "Failed to resolve 'master-0.train.default.svc' ([Errno -2] Name or service not known)",
    "ssh: Could not resolve hostname n0198: Name or service not known",
    "java.net.UnknownHostException: headnode.local",
])
def test_a_private_name_that_does_not_resolve_is_not_blamed_on_the_nodes_resolver(make_bundle, line):
    d = analyze_bundle(make_bundle({"app/slurm-4242.out": line + "\n"}, nodes="gpu-02"))
    assert d["sub_domain"] != "network"
