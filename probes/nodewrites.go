package probes

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// NodeWrites is what one node's kubelet identity may write to
// status.declaredFeatures, asked by impersonating it (system:node:<As> in
// system:nodes) with server-side dry runs: nothing is stored.
type NodeWrites struct {
	As    string        `json:"as,omitempty"`
	Own   *UpdateResult `json:"own,omitempty"`   // its own node
	Other *UpdateResult `json:"other,omitempty"` // another node of the run
	// OtherAt is the same write of another node asked of each apiserver at
	// its own address, where several run: NodeRestriction missing on one
	// of them is otherwise found only when the cluster's address reaches it.
	OtherAt map[string]*UpdateResult `json:"otherAt,omitempty"`
	// Unchecked says why the writes were not asked ("" when they were).
	Unchecked string `json:"unchecked,omitempty"`
	// NotApplicable says why there is no other node to write.
	NotApplicable string `json:"notApplicable,omitempty"`
}

// nodeWritesGrant names the role that lets the probe impersonate a node.
const nodeWritesGrant = "config/rbac/node-writes.yaml grants it"

// nodeIdentity is the user and group a kubelet's credentials carry.
func nodeIdentity(node string) (user, group string) { return "system:node:" + node, "system:nodes" }

// AskNodeWrites writes, as the kubelet identity of the first node of the
// run, its own declared set onto its own node and onto a node of another
// pool (or, with one pool, another node): the apiserver must admit the
// first and refuse the second in NodeRestriction's words. The second is
// also asked of each apiserver at its own address (apiservers, where
// several run).
func AskNodeWrites(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, decls []Declaration, apiservers []string) (NodeWrites, error) {
	if len(decls) == 0 {
		return NodeWrites{Unchecked: "no node is in scope"}, nil
	}
	byName := slices.SortedFunc(slices.Values(decls), func(a, b Declaration) int { return strings.Compare(a.Node, b.Node) })
	own := byName[0]
	w := NodeWrites{As: own.Node}
	user, group := nodeIdentity(own.Node)
	for _, attr := range []authzv1.ResourceAttributes{
		{Verb: "impersonate", Resource: "users", Name: user},
		{Verb: "impersonate", Resource: "groups", Name: group},
	} {
		ok, err := allowed(ctx, cs, authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr})
		if err != nil {
			return w, err
		}
		if !ok {
			w.Unchecked = fmt.Sprintf("the identity may not impersonate %s %q (%s), so no kubelet identity was asked to write another node's status.declaredFeatures: "+
				"whether NodeRestriction keeps one kubelet from declaring for another node is unchecked", attr.Resource, attr.Name, nodeWritesGrant)
			return w, nil
		}
	}
	// The request is the node's whoever impersonates it; a config that
	// already impersonates (the CLI's --as) was asked the access review
	// above, and its impersonation is replaced, not chained.
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{group}}
	ascs, err := kubernetes.NewForConfig(as)
	if err != nil {
		return w, err
	}
	ownRes, err := WriteDeclaredDryRun(ctx, ascs, own.Node, own.Declared)
	if err != nil {
		return w, err
	}
	w.Own = &ownRes
	other, ok := otherNode(byName)
	if !ok {
		w.NotApplicable = "only " + own.Node + " is in scope: there is no other node to write"
		return w, nil
	}
	otherRes, err := WriteDeclaredDryRun(ctx, ascs, other.Node, own.Declared)
	if err != nil {
		return w, err
	}
	w.Other = &otherRes
	for _, ep := range apiservers {
		at, err := kubernetes.NewForConfig(AtAPIServer(as, ep))
		if err != nil {
			return w, err
		}
		res, err := WriteDeclaredDryRun(ctx, at, other.Node, own.Declared)
		if err != nil {
			return w, fmt.Errorf("%s: %w", ep, err)
		}
		if w.OtherAt == nil {
			w.OtherAt = map[string]*UpdateResult{}
		}
		w.OtherAt[ep] = &res
	}
	return w, nil
}

// otherNode is the first node of another pool than the first node's, or
// else the second node.
func otherNode(byName []Declaration) (Declaration, bool) {
	if len(byName) < 2 {
		return Declaration{}, false
	}
	if i := slices.IndexFunc(byName, func(d Declaration) bool { return d.Pool != byName[0].Pool }); i > 0 {
		return byName[i], true
	}
	return byName[1], true
}
