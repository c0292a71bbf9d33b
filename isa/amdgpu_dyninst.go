package isa

// dyninst12Kind is the kind Dyninst 12.3 (hpcstruct 2023.08's) gives an
// AMD GPU instruction: it takes s_swappc_b64 for a jump that does not
// fall through, as s_setpc_b64 (dyninst#1376, "swappc and setpc are not
// fall-through"; parsing on after calls came later, dyninst#1470). So the
// code after a call is out of the caller's loops in hpcstruct's output:
// at -O0, where clang calls the helpers of a loop's body, the body after
// the call.
func (amdgpu) dyninst12Kind(in Inst) Kind {
	if in.Kind == IndirectCall {
		return IndirectJump
	}
	return in.Kind
}
