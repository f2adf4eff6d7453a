// A TypeScript or JavaScript repository + a list of its files → one JSON line per call site,
// with the TypeScript type checker's answer.
//
// Usage (run by bench/edge_oracle.py, with the typescript package it installed):
//
//   node bench/oracle/ts_sites.js --typescript DIR/node_modules/typescript --repo CLONE \
//        --files FILES.txt [--out SITES.jsonl]
//
// FILES.txt holds repository-relative paths, one a line; they are the program's root files
// (imports pull in the rest). Compiler options: allowJs + checkJs, moduleResolution "bundler",
// no @types, and `paths` that map each workspace package (every package.json with a name) to
// its sources (DIR/src when it exists, else DIR), merged with the root tsconfig.json's own
// `paths`; nothing is installed in the clone, so third-party packages stay unresolved.
//
// Call sites: every CallExpression whose callee is a name or a property access (forms f(),
// this.m(), obj.m(), obj.attr.m() for two or more qualifiers, super.m() reported as
// "super().m()", expr.m() for any other receiver) and every NewExpression (form Class()).
// Each site records the chain of enclosing named definitions (functions, methods, classes,
// constructors as "constructor", variables initialised with a function or class; innermost
// first) by line range; arrow functions and function expressions without a name belong to
// the enclosing named one.
//
// The oracle: checker.getSymbolAtLocation(callee name), followed through aliases
// (checker.getAliasedSymbol); a declaration that is not itself callable code (a parameter,
// a variable or property without a function initialiser) is replaced by the declaration of
// the callee type's first call or construct signature. A target is "repo" (a declaration in a
// non-declaration file of the repository outside node_modules), "abstract" (an interface or
// type member, an overload signature, a `declare` or .d.ts declaration of the repository: it
// names no code), or "external" (lib.d.ts, node_modules, outside the repository).
"use strict";

const fs = require("fs");
const path = require("path");

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, "")] = argv[i + 1];
  for (const key of ["typescript", "repo", "files"]) {
    if (!args[key]) throw new Error(`missing --${key}`);
  }
  return args;
}

function workspacePaths(ts, repo, files) {
  const paths = {};
  for (const rel of files.filter((f) => path.basename(f) === "package.json")) {
    let pkg;
    try {
      pkg = JSON.parse(fs.readFileSync(path.join(repo, rel), "utf8"));
    } catch {
      continue;
    }
    if (!pkg || typeof pkg.name !== "string" || rel.includes("node_modules")) continue;
    const dir = path.dirname(rel);
    const base = fs.existsSync(path.join(repo, dir, "src")) ? path.join(dir, "src") : dir;
    paths[pkg.name] = [base];
    paths[`${pkg.name}/*`] = [`${base}/*`, `${dir}/*`];
  }
  const root = path.join(repo, "tsconfig.json");
  if (fs.existsSync(root)) {
    const read = ts.readConfigFile(root, ts.sys.readFile);
    const own = read.config && read.config.compilerOptions && read.config.compilerOptions.paths;
    if (own) Object.assign(paths, own);
  }
  return paths;
}

function repoFiles(repo) {
  const { execFileSync } = require("child_process");
  const out = execFileSync("git", ["-C", repo, "ls-files"], { maxBuffer: 1 << 28 }).toString();
  return out.split("\n").filter(Boolean);
}

function lineOf(sf, pos) {
  return sf.getLineAndCharacterOfPosition(pos).line + 1;
}

function nameOfDefinition(ts, node) {
  if (
    (ts.isFunctionDeclaration(node) ||
      ts.isClassDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isClassExpression(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node)) &&
    node.name &&
    ts.isIdentifier(node.name)
  ) {
    return node.name;
  }
  if (ts.isConstructorDeclaration(node)) return null;
  if (
    (ts.isVariableDeclaration(node) || ts.isPropertyDeclaration(node) || ts.isPropertyAssignment(node)) &&
    node.name &&
    ts.isIdentifier(node.name) &&
    node.initializer &&
    (ts.isArrowFunction(node.initializer) ||
      ts.isFunctionExpression(node.initializer) ||
      ts.isClassExpression(node.initializer))
  ) {
    return node.name;
  }
  return null;
}

function receiverForm(ts, receiver) {
  if (receiver.kind === ts.SyntaxKind.ThisKeyword) return "this.m()";
  if (receiver.kind === ts.SyntaxKind.SuperKeyword) return "super().m()";
  if (ts.isIdentifier(receiver)) return "obj.m()";
  let root = receiver;
  while (ts.isPropertyAccessExpression(root)) root = root.expression;
  if (
    ts.isPropertyAccessExpression(receiver) &&
    (ts.isIdentifier(root) || root.kind === ts.SyntaxKind.ThisKeyword)
  ) {
    return "obj.attr.m()";
  }
  return "expr.m()";
}

function calleeOf(ts, node) {
  const callee = node.expression;
  if (ts.isNewExpression(node)) {
    if (ts.isIdentifier(callee)) return { nameNode: callee, form: "Class()", receiver: "" };
    if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.name)) {
      return { nameNode: callee.name, form: "Class()", receiver: callee.expression.getText().slice(0, 60) };
    }
    return null;
  }
  if (ts.isIdentifier(callee)) return { nameNode: callee, form: "f()", receiver: "" };
  if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.name)) {
    return {
      nameNode: callee.name,
      form: receiverForm(ts, callee.expression),
      receiver: callee.expression.getText().slice(0, 60),
    };
  }
  return null;
}

const ABSTRACT_KINDS = new Set([
  "MethodSignature",
  "PropertySignature",
  "CallSignature",
  "ConstructSignature",
  "FunctionType",
  "ConstructorType",
  "IndexSignature",
  "InterfaceDeclaration",
  "TypeAliasDeclaration",
  "TypeLiteral",
]);

function isCodeDeclaration(ts, decl) {
  if (
    ts.isFunctionDeclaration(decl) ||
    ts.isMethodDeclaration(decl) ||
    ts.isClassDeclaration(decl) ||
    ts.isClassExpression(decl) ||
    ts.isFunctionExpression(decl) ||
    ts.isArrowFunction(decl) ||
    ts.isConstructorDeclaration(decl) ||
    ts.isMethodSignature(decl) ||
    ts.isInterfaceDeclaration(decl) ||
    ts.isGetAccessorDeclaration(decl)
  ) {
    return true;
  }
  const value = ts.isBinaryExpression(decl) ? decl.right : decl.initializer;
  return !!value && isFunctionValue(ts, value);
}

function isFunctionValue(ts, value) {
  return ts.isArrowFunction(value) || ts.isFunctionExpression(value) || ts.isClassExpression(value);
}

// the name a declaration is known by: its own, or that of the variable, property or
// assignment (`exports.f = function () {}`) that holds an unnamed function or class
function declaredName(ts, decl, sf) {
  if (decl.name && ts.isIdentifier(decl.name)) return decl.name;
  const holder = decl.parent;
  if (holder && (ts.isVariableDeclaration(holder) || ts.isPropertyAssignment(holder) ||
                 ts.isPropertyDeclaration(holder)) && holder.name && ts.isIdentifier(holder.name)) {
    return holder.name;
  }
  const assignment = ts.isBinaryExpression(decl) ? decl : holder && ts.isBinaryExpression(holder) ? holder : null;
  if (assignment && ts.isPropertyAccessExpression(assignment.left)) {
    const left = assignment.left;
    const owner = left.expression.getText(sf);
    // module.exports = f: unnamed; exports.f / X.prototype.f / X.f: named f
    if (!(owner === "module" && left.name.text === "exports")) return left.name;
  }
  return null;
}

function describe(ts, repo, decl) {
  const sf = decl.getSourceFile();
  const file = path.resolve(sf.fileName);
  const kind = ts.SyntaxKind[decl.kind];
  const nameNode = declaredName(ts, decl, sf);
  const line = lineOf(sf, (nameNode || decl).getStart(sf));
  const name = nameNode ? nameNode.text : "";
  const rel = path.relative(repo, file);
  const outside = rel.startsWith("..") || path.isAbsolute(rel) || rel.split(path.sep).includes("node_modules");
  if (outside) return { name, kind, external: true, abstract: false, file: null, line, module: sf.fileName };
  const ambient =
    sf.isDeclarationFile ||
    (ts.getCombinedModifierFlags(decl) & ts.ModifierFlags.Ambient) !== 0 ||
    ((ts.isFunctionDeclaration(decl) || ts.isMethodDeclaration(decl)) && !decl.body);
  const abstract = ambient || ABSTRACT_KINDS.has(kind);
  return { name, kind, external: false, abstract, file: rel.split(path.sep).join("/"), line, module: "" };
}

function signatureDeclarations(ts, checker, nameNode, isNew) {
  const type = checker.getTypeAtLocation(nameNode);
  if (!type) return [];
  const signatures = isNew ? type.getConstructSignatures() : type.getCallSignatures();
  const out = [];
  for (const signature of signatures) {
    const decl = signature.getDeclaration && signature.getDeclaration();
    if (decl) out.push(isNew && decl.parent && ts.isClassLike(decl.parent) ? decl.parent : decl);
  }
  if (!out.length && type.symbol && type.symbol.declarations) {
    for (const decl of type.symbol.declarations) if (ts.isClassLike(decl)) out.push(decl);
  }
  return out;
}

function resolveSite(ts, checker, repo, nameNode, isNew) {
  let symbol = checker.getSymbolAtLocation(nameNode);
  if (!symbol) return { binding: "", targets: [] };
  if (symbol.flags & ts.SymbolFlags.Alias) {
    try {
      symbol = checker.getAliasedSymbol(symbol);
    } catch {
      return { binding: "", targets: [] };
    }
  }
  const decls = symbol.declarations || [];
  const binding = decls.length ? ts.SyntaxKind[decls[0].kind] : "";
  let chosen = decls.filter((d) => isCodeDeclaration(ts, d));
  if (!chosen.length) chosen = signatureDeclarations(ts, checker, nameNode, isNew);
  const seen = new Set();
  const targets = [];
  for (const decl of chosen) {
    const target = describe(ts, repo, decl);
    const key = `${target.file}:${target.line}:${target.name}:${target.module}`;
    if (!seen.has(key)) {
      seen.add(key);
      targets.push(target);
    }
  }
  return { binding, targets };
}

function statusOf(targets) {
  if (!targets.length) return "unresolved";
  if (targets.some((t) => !t.external && !t.abstract)) return "repo";
  if (targets.some((t) => t.abstract)) return "abstract";
  return "external";
}

function fileSites(ts, checker, repo, sf, rel, emit) {
  function visit(node, scope) {
    let inner = scope;
    const defName = nameOfDefinition(ts, node);
    if (ts.isConstructorDeclaration(node)) {
      const start = lineOf(sf, node.getStart(sf));
      inner = [["constructor", start, start, lineOf(sf, node.getEnd())], ...scope];
    } else if (defName) {
      const start = lineOf(sf, node.getStart(sf));
      inner = [[defName.text, lineOf(sf, defName.getStart(sf)), start, lineOf(sf, node.getEnd())], ...scope];
      if (ts.isVariableDeclaration(node) || ts.isPropertyAssignment(node) || ts.isPropertyDeclaration(node)) {
        // a const/property holding a function: its range starts at its statement (`export const`)
        let statement = node;
        while (statement.parent && !ts.isSourceFile(statement.parent) && !ts.isClassLike(statement.parent) &&
               !ts.isObjectLiteralExpression(statement.parent) && !ts.isBlock(statement.parent)) {
          statement = statement.parent;
        }
        inner[0][2] = lineOf(sf, statement.getStart(sf));
      }
    }
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      const callee = calleeOf(ts, node);
      if (callee) {
        const { binding, targets } = resolveSite(ts, checker, repo, callee.nameNode, ts.isNewExpression(node));
        const position = sf.getLineAndCharacterOfPosition(callee.nameNode.getStart(sf));
        emit({
          file: rel,
          line: position.line + 1,
          col: position.character,
          callee: callee.nameNode.text,
          form: callee.form,
          receiver: callee.receiver,
          binding,
          scope: inner,
          status: statusOf(targets),
          targets,
        });
      }
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  }
  visit(sf, []);
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const ts = require(path.resolve(args.typescript));
  const repo = path.resolve(args.repo);
  const files = fs.readFileSync(args.files, "utf8").split("\n").filter(Boolean);
  const options = {
    allowJs: true,
    checkJs: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ESNext,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    resolveJsonModule: true,
    jsx: ts.JsxEmit.Preserve,
    types: [],
    baseUrl: repo,
    paths: workspacePaths(ts, repo, repoFiles(repo)),
    maxNodeModuleJsDepth: 0,
  };
  const program = ts.createProgram(files.map((f) => path.join(repo, f)), options);
  const checker = program.getTypeChecker();
  const out = args.out ? fs.openSync(args.out, "w") : 1;
  const emit = (record) => fs.writeSync(out, JSON.stringify(record) + "\n");
  files.forEach((rel, index) => {
    const sf = program.getSourceFile(path.join(repo, rel));
    if (sf) fileSites(ts, checker, repo, sf, rel, emit);
    if ((index + 1) % 50 === 0) process.stderr.write(`ts_sites: ${index + 1}/${files.length} files\n`);
  });
  if (out !== 1) fs.closeSync(out);
}

main();
