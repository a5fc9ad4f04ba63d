// Programmatic dependent launch (sm_90 and later). The launcher lets a call's pre-passes and its
// split-K reduction start while the grid before them in the stream drains
// (cudaLaunchAttributeProgrammaticStreamSerialization), without the launch gap between them. Such a
// kernel may run beside the grid it depends on, so every kernel the launcher starts opens with
// follow_previous_grid(), before its first global load or store and before any return: each grid's
// completion then implies its predecessor's. A no-op for a kernel launched without the attribute.
#pragma once

__device__ __forceinline__ void follow_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // Returns once the previous grid in the stream has completed and its writes are visible.
  asm volatile("griddepcontrol.wait;" ::: "memory");
  // Then lets the next grid launch once every block of this one has got here (or exited): its
  // blocks take the room this grid leaves free and wait above, ready the moment this one completes.
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
