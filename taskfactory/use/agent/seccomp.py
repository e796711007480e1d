"""The system calls a sandbox refuses, as the classic BPF program bubblewrap's
``--seccomp`` loads.

Refused with EPERM, for every process of the sandbox (the keeper too):
kernel objects that outlive a session's processes (keyrings, POSIX message
queues), namespaces and mounts (``unshare``, ``setns``, ``mount`` and the new
mount API, and ``clone`` asking for a namespace), reading or tracing another
process (``ptrace``, ``process_vm_readv``), and kernel interfaces no analysis
needs (``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring``, modules,
``kexec``, file handles). ``clone3``, whose flags a filter cannot read, gets
ENOSYS, on which the C library falls back to ``clone``. A call of another
architecture (x32's numbers, a 32-bit ABI) kills the process.
"""

from __future__ import annotations

import errno
import functools
import platform
import struct

#: x86_64's numbers of the refused calls.
REFUSED = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442,
    "add_key": 248, "request_key": 249, "keyctl": 250,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244,
    "mq_getsetattr": 245,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246,
    "kexec_file_load": 320, "name_to_handle_at": 303, "open_by_handle_at": 304,
}
CLONE, CLONE3 = 56, 435
#: clone's flags that ask for a new namespace (mount, cgroup, UTS, IPC, user, PID, network, time).
NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_LOAD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06   # BPF_LD|W|ABS, BPF_JMP|JEQ|K ..., BPF_RET|K
_ALLOW, _KILL = 0x7FFF0000, 0x80000000
_NR, _ARCH, _ARG0 = 0, 4, 16   # offsets in struct seccomp_data (the low half of args[0])


def _errno(code: int) -> int:
    return 0x00050000 | code


@functools.cache
def program() -> bytes | None:
    """The filter as bubblewrap reads it (struct sock_filter entries), or None
    on an architecture whose numbers this module does not hold."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    code = [(_LOAD, 0, 0, _ARCH), (_JEQ, 1, 0, _AUDIT_ARCH_X86_64), (_RET, 0, 0, _KILL),
            (_LOAD, 0, 0, _NR), (_JGE, 0, 1, _X32_BIT), (_RET, 0, 0, _KILL)]
    for number in sorted(REFUSED.values()):
        code += [(_JEQ, 0, 1, number), (_RET, 0, 0, _errno(errno.EPERM))]
    code += [(_JEQ, 0, 1, CLONE3), (_RET, 0, 0, _errno(errno.ENOSYS)),
             (_JEQ, 0, 3, CLONE), (_LOAD, 0, 0, _ARG0), (_JSET, 0, 1, NAMESPACE_FLAGS),
             (_RET, 0, 0, _errno(errno.EPERM)), (_RET, 0, 0, _ALLOW)]
    return b"".join(struct.pack("<HBBI", *entry) for entry in code)
