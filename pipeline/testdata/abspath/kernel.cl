/* An OpenCL kernel with inlined calls in its own file, for
   pipeline/TestCompatAbsolutePath's AMD GPU code objects. */
static inline float sq(float x) { return x * x; }
static inline float poly(float x) { float s = 0; for (int i = 0; i < 4; i++) s = s * x + sq(x + i); return s; }
__kernel void k(__global float *a, int n) {
	int i = (int)__builtin_amdgcn_workitem_id_x();
	for (int j = 0; j < n; j++)
		a[i] += poly(a[i] + j);
}
