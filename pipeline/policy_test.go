package pipeline

import "bloop/dyninst"

// policyIf is hpcstruct's policy when on, else none.
func policyIf(on bool) *dyninst.Policy {
	if on {
		return dyninst.Hpcstruct
	}
	return nil
}
