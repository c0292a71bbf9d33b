package scopes

import (
	"slices"
	"testing"

	"bloop/cfg"
	"bloop/havlak"
	"bloop/isa"
)

// TestHpcstructExits: hpcstruct's exit conditions are the blocks with an
// edge into the loop and one out of it, counting the edges Dyninst has out
// of the procedure (a conditional return's, a conditional tail call's) but
// neither calls nor their fall-throughs. ShapeOf's exits are the
// intraprocedural ones only.
func TestHpcstructExits(t *testing.T) {
	// Every case is a loop of blocks 1 and 2 (1 -> 2 -> 1), entered from
	// block 0 and left to block 3; block 1 ends as given.
	for _, tc := range []struct {
		name      string
		last      isa.Inst // block 1's last instruction
		succs1    []int    // block 1's successors
		shape, hs []int    // exits: ShapeOf's, HpcstructExits'
	}{
		{"conditional branch out", isa.Inst{Kind: isa.CondJump, Target: 0x30}, []int{3, 2}, []int{1}, []int{1}},
		{"conditional return (beqlr)", isa.Inst{Kind: isa.CondReturn}, []int{2}, nil, []int{1}},
		{"conditional tail call", isa.Inst{Kind: isa.CondJump, Target: 0x9000}, []int{2}, nil, []int{1}},
		{"call that returns", isa.Inst{Kind: isa.Call, Target: 0x9000}, []int{2}, nil, nil},
		{"straight on", isa.Inst{Kind: isa.Other}, []int{2}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := tc.last
			last.Addr, last.Len = 0x1c, 4
			g := &cfg.Graph{Blocks: []*cfg.Block{
				{Start: 0x00, End: 0x10, Insts: []cfg.Inst{{Inst: isa.Inst{Addr: 0x00, Len: 4, Kind: isa.Jump, Target: 0x10}}}, Succs: []int{1}},
				{Start: 0x10, End: 0x20, Insts: []cfg.Inst{{Inst: isa.Inst{Addr: 0x10, Len: 4}}, {Inst: last}}, Succs: tc.succs1},
				{Start: 0x20, End: 0x30, Insts: []cfg.Inst{{Inst: isa.Inst{Addr: 0x20, Len: 4, Kind: isa.Jump, Target: 0x10}}}, Succs: []int{1}},
				{Start: 0x30, End: 0x34, Insts: []cfg.Inst{{Inst: isa.Inst{Addr: 0x30, Len: 4, Kind: isa.Return}}}},
			}}
			for i, b := range g.Blocks {
				for _, s := range b.Succs {
					g.Blocks[s].Preds = append(g.Blocks[s].Preds, i)
				}
			}
			f := havlak.Find(len(g.Blocks), 0, g.Succs())
			if len(f.Loops) != 1 {
				t.Fatalf("%d loops", len(f.Loops))
			}
			sh := ShapeOf(g, f.Loops[0])
			if !slices.Equal(sh.Exits, tc.shape) {
				t.Errorf("ShapeOf exits %v, want %v", sh.Exits, tc.shape)
			}
			if got := HpcstructExits(g, f.Loops[0], sh); !slices.Equal(got, tc.hs) {
				t.Errorf("HpcstructExits %v, want %v", got, tc.hs)
			}
		})
	}
}
