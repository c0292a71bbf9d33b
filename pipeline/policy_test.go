package pipeline

import "bloop/dyninst"

// policyIf is hpcstruct's policy when compat, else none.
func policyIf(compat bool) *dyninst.Policy {
	if compat {
		return dyninst.Hpcstruct
	}
	return nil
}
