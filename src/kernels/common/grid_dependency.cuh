// Programmatic dependent launch (sm_90 and later). The launcher lets a call's pre-passes and its
// split-K reduction start while the grid before them in the stream drains
// (cudaLaunchAttributeProgrammaticStreamSerialization), without the launch gap between them. Such a
// kernel may run beside the grid it depends on: every kernel the launcher starts calls
// await_previous_grid() before its first global load or store and before any return, so that each
// grid's completion implies its predecessor's. Both are no-ops for a kernel launched without the
// attribute.
#pragma once

// Returns once the previous grid in the stream has completed and its memory operations are
// visible.
__device__ __forceinline__ void await_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the next grid launch once every block of this one has called it (or exited): its blocks
// then take SM room this grid leaves free and wait in await_previous_grid, ready the moment this
// grid completes. Called after await_previous_grid, so that dependents chain in stream order.
__device__ __forceinline__ void release_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Both, at a kernel's start.
__device__ __forceinline__ void follow_previous_grid() {
  await_previous_grid();
  release_next_grid();
}
