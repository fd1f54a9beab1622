//! `no_std` runtime support for plugins: allocator, panic handler, memory routines.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;

/// A bump allocator over linear memory, grown page by page. A plugin instance serves one
/// call and is then thrown away, so memory is never given back — except that the most
/// recent allocation can grow or shrink in place, which covers `Vec`/`String` growth.
struct Bump {
    state: UnsafeCell<(usize, usize, usize)>, // (next free, end of memory, start of last allocation)
}

// SAFETY: wasm32 plugin instances are single-threaded.
unsafe impl Sync for Bump {}

const PAGE: usize = 65_536;

unsafe extern "C" {
    /// Where the linker put the end of static data and stack: the heap starts here.
    static __heap_base: u8;
}

impl Bump {
    /// Reserves `size` bytes aligned to `align`; null when memory cannot grow.
    unsafe fn reserve(&self, size: usize, align: usize) -> *mut u8 {
        // SAFETY: single-threaded; only this allocator touches the state.
        let state = unsafe { &mut *self.state.get() };
        if state.1 == 0 {
            // SAFETY: only the address of the linker symbol is taken.
            state.0 = core::ptr::addr_of!(__heap_base) as usize;
            state.1 = core::arch::wasm32::memory_size(0) * PAGE;
        }
        let start = (state.0 + align - 1) & !(align - 1);
        let Some(next) = start.checked_add(size) else { return core::ptr::null_mut() };
        if next > state.1 {
            let pages = (next - state.1).div_ceil(PAGE);
            if core::arch::wasm32::memory_grow(0, pages) == usize::MAX {
                return core::ptr::null_mut();
            }
            state.1 += pages * PAGE;
        }
        *state = (next, state.1, start);
        start as *mut u8
    }
}

unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        unsafe { self.reserve(layout.size(), layout.align()) }
    }

    unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {}

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: single-threaded access to the state.
        let state = unsafe { &mut *self.state.get() };
        let (_, end, last) = *state;
        if ptr as usize == last && last + new_size <= end {
            state.0 = last + new_size;
            return ptr;
        }
        // SAFETY: a fresh block of the new size, then the old bytes copied over.
        let new = unsafe { self.reserve(new_size, layout.align()) };
        if !new.is_null() {
            unsafe { core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size)) };
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Bump = Bump { state: UnsafeCell::new((0, 0, 0)) };

/// A panic ends the call with a trap; the host records it as a plugin error.
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

/// `memcmp`, which the compiler calls for slice and string comparisons; a `no_std` wasm
/// component has no C library to supply it.
///
/// # Safety
/// `a` and `b` must be valid for reads of `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i < n {
        // SAFETY: the caller guarantees both ranges are readable.
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i += 1;
    }
    0
}

/// `bcmp`: equality-only `memcmp`.
///
/// # Safety
/// As for [`memcmp`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: forwarded with the same contract.
    unsafe { memcmp(a, b, n) }
}

/// The canonical ABI's allocator entry point: the host calls it to place strings and lists
/// in the plugin's memory.
///
/// # Safety
/// Called by the host only, following the component model's canonical ABI.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cabi_realloc(old: *mut u8, old_len: usize, align: usize, new_len: usize) -> *mut u8 {
    if new_len == 0 {
        return align as *mut u8;
    }
    let ptr = if old_len == 0 {
        // SAFETY: `align` is a power of two given by the canonical ABI.
        unsafe { ALLOCATOR.alloc(Layout::from_size_align_unchecked(new_len, align)) }
    } else {
        // SAFETY: `old` was returned by this allocator with this size and alignment.
        unsafe { ALLOCATOR.realloc(old, Layout::from_size_align_unchecked(old_len, align), new_len) }
    };
    if ptr.is_null() {
        core::arch::wasm32::unreachable();
    }
    ptr
}
