package structfile

import (
	"encoding/json"
	"io"
	"strings"
)

// ManifestVersion is the version of the manifest record
// (schema/manifest-v1.json).
const ManifestVersion = 1

// Record is one line of a run's manifest (JSON Lines): what became of one
// input.
type Record struct {
	Version      int            `json:"version"`
	Path         string         `json:"path"`
	Operand      string         `json:"operand"`
	Rel          string         `json:"rel"`
	Output       string         `json:"output,omitempty"`
	Outcome      string         `json:"outcome"` // written, cached, refused or failed
	Cache        string         `json:"cache,omitempty"`
	Reason       string         `json:"reason,omitempty"`
	InputSHA256  string         `json:"input_sha256,omitempty"`
	OutputSHA256 string         `json:"output_sha256,omitempty"`
	Procedures   *int           `json:"procedures,omitempty"`
	Files        *int           `json:"files,omitempty"`
	Loops        *int           `json:"loops,omitempty"`
	Inlined      *int           `json:"inlined_calls,omitempty"`
	Problems     map[string]int `json:"problems,omitempty"`
	Corrupt      map[string]int `json:"corrupt,omitempty"`
	Warnings     []string       `json:"warnings,omitempty"`
	// DebugFile and DebugSource say which separate debug file was read
	// and where it came from ("local" or "debuginfod"); absent for none.
	DebugFile   string `json:"debug_file,omitempty"`
	DebugSource string `json:"debug_source,omitempty"`
	// Shard is the part of a sharded run (--shard) the input fell in.
	Shard       *ShardInfo `json:"shard,omitempty"`
	WallSeconds float64    `json:"wall_seconds"`
}

// ShardInfo says which shard of which plan a run was: the tasks of one
// split agree on Plan, N and Digest (inputs.Assignment).
type ShardInfo struct {
	K      int    `json:"k"`
	N      int    `json:"n"`
	Plan   string `json:"plan"`
	Digest string `json:"digest"`
}

// Outcomes of a Record.
const (
	OutcomeWritten = "written"
	OutcomeCached  = "cached"
	OutcomeRefused = "refused"
	OutcomeFailed  = "failed"
)

// NewRecord describes what became of job j.
func NewRecord(j Job, o *Outcome) Record {
	r := Record{Version: ManifestVersion, Path: j.Path, Operand: j.Operand, Rel: j.Rel,
		WallSeconds: o.Wall.Seconds()}
	if r.Path == "" {
		r.Path = j.Bin
	}
	switch {
	case o.Refused:
		r.Outcome, r.Reason = OutcomeRefused, oneLine(o.Err)
		return r
	case o.Err != nil:
		r.Outcome, r.Reason, r.InputSHA256 = OutcomeFailed, oneLine(o.Err), o.InputSum
		return r
	}
	res := o.Result
	r.Outcome, r.Output = OutcomeWritten, j.Dest
	if res.Cached {
		r.Outcome, r.Cache = OutcomeCached, res.CacheTier
	}
	r.InputSHA256, r.OutputSHA256 = o.InputSum, o.OutputSum
	r.Procedures, r.Files, r.Loops, r.Inlined = ptr(res.NumProcs), ptr(res.NumFiles), ptr(res.NumLoops), ptr(res.NumInlined)
	r.Problems = res.ProblemCounts
	for _, c := range res.Corrupt {
		if r.Corrupt == nil {
			r.Corrupt = map[string]int{}
		}
		r.Corrupt[c.Kind] += c.Count
	}
	r.Warnings = res.Warnings
	r.DebugFile, r.DebugSource = res.DebugFile, res.DebugSource
	return r
}

func ptr(n int) *int { return &n }

// oneLine is an error's message on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " ")), " ")
}

// WriteManifest writes records as JSON Lines, one per input, in order.
func WriteManifest(w io.Writer, recs []Record) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	return nil
}
