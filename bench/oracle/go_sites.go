// A Go module's clone + a list of its files → one JSON line per call site, with go/types' answer.
//
// Usage (run by bench/edge_oracle.py with `go run`; standard library only, no module needed):
//
//	go run bench/oracle/go_sites.go -repo CLONE -files FILES.txt [-out SITES.jsonl]
//
// FILES.txt holds repository-relative paths, one a line. Each directory holding one of them is
// type-checked with go/types (build constraints from go/build's default context): its package
// with its in-package tests, and its external `_test` package apart. Imports of the module
// (the root go.mod's module path) are type-checked from the clone; the standard library from
// GOROOT's sources; any other import becomes an empty package, so uses of third-party code
// stay unresolved. Type errors are ignored.
//
// Call sites: every CallExpr whose callee is a name or a selector (generic instantiations
// unwrapped): f(), recv.m() on the enclosing method's receiver (form "self.m()"), pkg.F() on
// an imported package (form "pkg.f()"), obj.m(), obj.attr.m() (two or more qualifiers),
// expr.m() for any other receiver; a conversion T(x) has form Class(). The enclosing named
// definitions are the function or method declarations by line range (function literals belong
// to the enclosing declaration).
//
// The oracle: types.Info.Uses of the callee's identifier. A *types.Func of the repository is a
// "repo" target (its name line); a method of an interface is "abstract"; a builtin (len,
// append) or an object of another package is "external"; a variable of function type (a
// parameter, a field, a local) leaves the site unresolved.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type target struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	External bool   `json:"external"`
	Abstract bool   `json:"abstract"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Module   string `json:"module"`
}

type site struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Col      int      `json:"col"`
	Callee   string   `json:"callee"`
	Form     string   `json:"form"`
	Receiver string   `json:"receiver"`
	Binding  string   `json:"binding"`
	SelfRoot bool     `json:"self_root"`
	Scope    [][]any  `json:"scope"`
	Status   string   `json:"status"`
	Targets  []target `json:"targets"`
}

type checker struct {
	repo    string
	module  string
	fset    *token.FileSet
	std     types.Importer
	loaded  map[string]*types.Package
	loading map[string]bool
}

func (c *checker) Import(path string) (*types.Package, error) {
	return c.ImportFrom(path, "", 0)
}

func (c *checker) ImportFrom(path, dir string, mode types.ImportMode) (*types.Package, error) {
	if pkg, ok := c.loaded[path]; ok {
		return pkg, nil
	}
	var pkg *types.Package
	if path == c.module || strings.HasPrefix(path, c.module+"/") {
		rel := strings.TrimPrefix(strings.TrimPrefix(path, c.module), "/")
		if !c.loading[path] {
			c.loading[path] = true
			pkg, _, _ = c.check(filepath.Join(c.repo, rel), path, false)
		}
	} else if !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") {
		if std, err := c.std.Import(path); err == nil {
			pkg = std
		}
	}
	if pkg == nil {
		parts := strings.Split(path, "/")
		pkg = types.NewPackage(path, parts[len(parts)-1])
		pkg.MarkComplete()
	}
	c.loaded[path] = pkg
	return pkg, nil
}

// check type-checks the package in dir (with its in-package tests when withTests), and returns
// it with its files and the uses of identifiers; the external test package is checked by xtest.
func (c *checker) check(dir, path string, withTests bool) (*types.Package, []*ast.File, *types.Info) {
	bp, err := build.Default.ImportDir(dir, build.ImportComment)
	if err != nil && bp == nil {
		return nil, nil, nil
	}
	names := append([]string{}, bp.GoFiles...)
	if withTests {
		names = append(names, bp.TestGoFiles...)
	}
	return c.checkFiles(dir, path, names)
}

func (c *checker) checkFiles(dir, path string, names []string) (*types.Package, []*ast.File, *types.Info) {
	var files []*ast.File
	for _, name := range names {
		file, err := parser.ParseFile(c.fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err == nil {
			files = append(files, file)
		}
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	config := types.Config{Importer: c, Error: func(error) {}, FakeImportC: true}
	pkg, _ := config.Check(path, c.fset, files, info)
	return pkg, files, info
}

func (c *checker) describe(obj types.Object) target {
	position := c.fset.Position(obj.Pos())
	t := target{Name: obj.Name(), Line: position.Line, Module: "builtins"}
	if obj.Pkg() != nil {
		t.Module = obj.Pkg().Path()
	}
	switch o := obj.(type) {
	case *types.Func:
		t.Kind = "func"
		if recv := o.Type().(*types.Signature).Recv(); recv != nil {
			t.Kind = "method"
			if types.IsInterface(recv.Type()) {
				t.Abstract = true
			}
		}
	case *types.TypeName:
		t.Kind = "type"
	case *types.Builtin:
		t.Kind, t.External, t.Module = "builtin", true, "builtins"
		return t
	}
	rel, err := filepath.Rel(c.repo, position.Filename)
	if position.Filename == "" || err != nil || strings.HasPrefix(rel, "..") {
		t.External = true
		return t
	}
	t.File = filepath.ToSlash(rel)
	return t
}

func unparen(e ast.Expr) ast.Expr {
	for {
		paren, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = paren.X
	}
}

func calleeOf(call *ast.CallExpr) (ident *ast.Ident, receiver ast.Expr) {
	fun := unparen(call.Fun)
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = f.X
	case *ast.IndexListExpr:
		fun = f.X
	}
	switch f := fun.(type) {
	case *ast.Ident:
		return f, nil
	case *ast.SelectorExpr:
		return f.Sel, f.X
	}
	return nil, nil
}

type frame struct {
	entry    []any
	receiver types.Object
}

func (c *checker) fileSites(file *ast.File, info *types.Info, rel string, emit func(site)) {
	var stack []frame
	var visit func(node ast.Node) bool
	scope := func() [][]any {
		out := [][]any{}
		for i := len(stack) - 1; i >= 0; i-- {
			out = append(out, stack[i].entry)
		}
		return out
	}
	visit = func(node ast.Node) bool {
		if decl, ok := node.(*ast.FuncDecl); ok {
			start := c.fset.Position(decl.Pos()).Line
			entry := []any{decl.Name.Name, c.fset.Position(decl.Name.Pos()).Line, start, c.fset.Position(decl.End()).Line}
			f := frame{entry: entry}
			if decl.Recv != nil && len(decl.Recv.List) > 0 && len(decl.Recv.List[0].Names) > 0 {
				f.receiver = info.Defs[decl.Recv.List[0].Names[0]]
			}
			stack = append(stack, f)
			ast.Inspect(decl.Body, visit)
			stack = stack[:len(stack)-1]
			return false
		}
		call, ok := node.(*ast.CallExpr)
		if !ok {
			return true
		}
		ident, receiver := calleeOf(call)
		if ident == nil {
			return true
		}
		form, text := "f()", ""
		if receiver != nil {
			text = types.ExprString(receiver)
			if len(text) > 60 {
				text = text[:60]
			}
			form = c.receiverForm(receiver, info, stack)
		}
		selfRoot := form == "self.m()" || (form == "obj.attr.m()" && c.isReceiver(rootOf(receiver), info, stack))
		position := c.fset.Position(ident.Pos())
		s := site{File: rel, Line: position.Line, Col: position.Column - 1, Callee: ident.Name, Form: form,
			Receiver: text, SelfRoot: selfRoot, Scope: scope(), Status: "unresolved", Targets: []target{}}
		if obj := info.Uses[ident]; obj != nil {
			s.Binding = strings.TrimPrefix(strings.Split(obj.String(), " ")[0], "*types.")
			switch obj.(type) {
			case *types.Func, *types.TypeName, *types.Builtin:
				t := c.describe(obj)
				if t.Kind == "type" {
					s.Form = "Class()"
				}
				s.Targets = append(s.Targets, t)
			}
		}
		s.Status = statusOf(s.Targets)
		emit(s)
		return true
	}
	for _, decl := range file.Decls {
		ast.Inspect(decl, visit)
	}
}

func rootOf(e ast.Expr) ast.Expr {
	for {
		selector, ok := unparen(e).(*ast.SelectorExpr)
		if !ok {
			return unparen(e)
		}
		e = selector.X
	}
}

// isReceiver: e names the receiver of an enclosing method declaration
func (c *checker) isReceiver(e ast.Expr, info *types.Info, stack []frame) bool {
	ident, ok := e.(*ast.Ident)
	if !ok {
		return false
	}
	obj := info.Uses[ident]
	for i := len(stack) - 1; i >= 0; i-- {
		if obj != nil && obj == stack[i].receiver {
			return true
		}
	}
	return false
}

func (c *checker) receiverForm(receiver ast.Expr, info *types.Info, stack []frame) string {
	switch r := unparen(receiver).(type) {
	case *ast.Ident:
		if _, isPkg := info.Uses[r].(*types.PkgName); isPkg {
			return "pkg.f()"
		}
		if c.isReceiver(r, info, stack) {
			return "self.m()"
		}
		return "obj.m()"
	case *ast.SelectorExpr:
		if _, ok := rootOf(r).(*ast.Ident); ok {
			return "obj.attr.m()"
		}
	}
	return "expr.m()"
}

func statusOf(targets []target) string {
	status := "unresolved"
	for _, t := range targets {
		switch {
		case !t.External && !t.Abstract:
			return "repo"
		case t.Abstract:
			status = "abstract"
		case status == "unresolved":
			status = "external"
		}
	}
	return status
}

func modulePath(repo string) string {
	data, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		return "\x00"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) == 2 && fields[0] == "module" {
			return fields[1]
		}
	}
	return "\x00"
}

func main() {
	repoFlag := flag.String("repo", "", "the clone")
	filesFlag := flag.String("files", "", "repository-relative paths, one a line")
	outFlag := flag.String("out", "", "where the sites go (standard output if empty)")
	flag.Parse()
	repo, _ := filepath.Abs(*repoFlag)
	data, err := os.ReadFile(*filesFlag)
	if err != nil {
		panic(err)
	}
	wanted := map[string]map[string]bool{}
	for _, rel := range strings.Fields(string(data)) {
		dir := filepath.Dir(rel)
		if wanted[dir] == nil {
			wanted[dir] = map[string]bool{}
		}
		wanted[dir][filepath.Base(rel)] = true
	}
	out := os.Stdout
	if *outFlag != "" {
		if out, err = os.Create(*outFlag); err != nil {
			panic(err)
		}
		defer out.Close()
	}
	writer := bufio.NewWriter(out)
	defer writer.Flush()
	encoder := json.NewEncoder(writer)
	fset := token.NewFileSet()
	c := &checker{repo: repo, module: modulePath(repo), fset: fset, std: importer.ForCompiler(fset, "source", nil),
		loaded: map[string]*types.Package{}, loading: map[string]bool{}}
	dirs := make([]string, 0, len(wanted))
	for dir := range wanted {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		abs := filepath.Join(repo, dir)
		path := c.module
		if dir != "." {
			path = c.module + "/" + filepath.ToSlash(dir)
		}
		bp, err := build.Default.ImportDir(abs, build.ImportComment)
		if err != nil && bp == nil {
			continue
		}
		groups := [][]string{append(append([]string{}, bp.GoFiles...), bp.TestGoFiles...), bp.XTestGoFiles}
		for i, names := range groups {
			if len(names) == 0 {
				continue
			}
			pkgPath := path
			if i == 1 {
				pkgPath += "_test"
			}
			_, files, info := c.checkFiles(abs, pkgPath, names)
			for _, file := range files {
				name := filepath.Base(fset.Position(file.Pos()).Filename)
				if wanted[dir][name] {
					rel := filepath.ToSlash(filepath.Join(dir, name))
					c.fileSites(file, info, rel, func(s site) { _ = encoder.Encode(s) })
				}
			}
		}
	}
}
