// Package verdict judges what a probe run saw: GO, HOLD with reasons, or
// INCOMPLETE naming every check it could not make. The checks are one
// table (checks.go); the JSON schema, the JUnit cases and the runbook's
// table are held to it.
package verdict

// Outcome is a verdict's word: of a probe run, and of a suite run (report).
type Outcome string

// GO: every check that applies was made and held. HOLD: a stop condition
// fired. INCOMPLETE: nothing held, but a check that applies was not made,
// so GO would say more than was seen.
const (
	GO         Outcome = "GO"
	HOLD       Outcome = "HOLD"
	INCOMPLETE Outcome = "INCOMPLETE"
)
