//! Reads of the JIT's memory that fail instead of crashing: a descriptor,
//! entry or symbol may point anywhere.

/// A copy of `len` bytes at `addr`, or None where any of them cannot be
/// read. `process_vm_readv` on the process itself returns EFAULT for
/// unmapped or unreadable memory instead of raising SIGSEGV. Read in
/// slices, so a size that lies fails before much is allocated.
pub fn copy(addr: usize, len: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    while out.len() < len {
        let n = STEP.min(len - out.len());
        let from = addr.checked_add(out.len())?;
        out.extend_from_slice(&read(from, n)?);
    }
    Some(out)
}

/// The most read at once.
const STEP: usize = 1 << 20;

/// `len` (at most [`STEP`]) bytes at `addr`.
fn read(addr: usize, len: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; len];
    let mut done = 0;
    while done < len {
        let local = libc::iovec {
            iov_base: buf[done..].as_mut_ptr().cast(),
            iov_len: len - done,
        };
        let remote = libc::iovec {
            iov_base: (addr.checked_add(done)?) as *mut libc::c_void,
            iov_len: len - done,
        };
        // SAFETY: `local` is our own buffer of the given length; the
        // remote range is only read by the kernel, which checks it.
        let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
        if n <= 0 {
            return None;
        }
        done += n as usize;
    }
    Some(buf)
}

/// Whether `len` bytes at `addr` can be read now.
pub fn readable(addr: usize, len: usize) -> bool {
    let mut at = 0;
    while at < len {
        let n = STEP.min(len - at);
        match addr.checked_add(at) {
            Some(start) if read(start, n).is_some() => at += n,
            _ => return false,
        }
    }
    true
}

/// The pointer-sized words at `addr`, or None where they cannot be read.
pub fn words<const N: usize>(addr: usize) -> Option<[u64; N]> {
    let bytes = copy(addr, N * 8)?;
    let mut out = [0u64; N];
    for (word, chunk) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        *word = u64::from_ne_bytes(chunk.try_into().ok()?);
    }
    Some(out)
}
