package claims

import "github.com/ndfq/ndfq/fixtures"

// Path: what needs a feature where no pod spec or update does
// (fixtures.Feature.Path); no claim kind asks it yet.
const Path Kind = "path"

// askedByKind are the features with no pod-spec or update inference that
// a claim kind asks all the same, in place of a path cell.
var askedByKind = map[string]Kind{
	fixtures.ExtendWebSocketsToKubelet:   Streaming,
	fixtures.DRANodeAllocatableResources: ResourceSlice,
	fixtures.DRAOptionalNodeOperations:   NodeOperations,
}

// pathRow: a registry feature no pod spec or update needs and no other
// kind asks is a cell ndfq cannot cover, with what needs it.
var pathRow = Row{
	Kind: Path, Observed: NotObserved,
	Claim: "what needs the feature outside pod specs and updates behaves as the node declares",
	Pool: func(p PoolContext) []Cell {
		var out []Cell
		for _, f := range fixtures.FeaturesOf(p.CP) {
			if _, asked := askedByKind[f.Name]; !asked && f.Scheduling == "" && f.Update == "" {
				c := p.Cell(Path, f.Name)
				c.Uncovered = "no claim kind yet for what needs it: " + f.Path
				out = append(out, c)
			}
		}
		return out
	},
}
