package claims

// Declares: the pool's nodes declare the feature, or do not.
const Declares Kind = "declares"

// declaresRow: every registry feature the control plane or the pool's
// kubelet knows is declared by the pool's nodes, or not.
var declaresRow = Row{
	Kind: Declares, Observed: BySpec,
	Claim: "the pool's nodes declare the feature exactly when the oracle says their kubelet must",
	Pool: func(p PoolContext) []Cell {
		var out []Cell
		for _, name := range registryFeatures(p.CP, p.K.Minor()) {
			c := p.Cell(Declares, name)
			c.Expect = Absent
			if p.K.Declares(name) {
				c.Expect = Declared
			}
			out = append(out, c)
		}
		return out
	},
}
