//===- SymbolicSyntax.cpp - symbolic expressions in MLIR assembly --------===//
#include "common/SymbolicSyntax.h"
#include "common/TidalDialect.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include <memory>

using namespace mlir;

namespace tidal {
namespace {

// Precedence levels, low to high.
enum Prec { kOr = 1, kAnd, kNot, kCmp, kAdd, kMul, kNeg, kAtom };

/// A parsed expression, kept only to print it canonically.
///
/// A run of left-associative operators of one level (`a + b - c`,
/// `x and y and z`) is one node with one kid per operand and `ops[i]` between
/// kids i and i + 1, so that a long flat expression is a wide node, not a deep
/// tree: parsing, printing and destroying it take linear time and constant
/// stack. The tree's depth is bounded by the parser's nesting limit.
struct Node {
  std::string op;             // atom text, function name, or prefix operator
  int prec = kAtom;
  std::vector<Node> kids;
  std::vector<StringRef> ops; // binary operators of a chain (static strings)
};

bool isKeyword(StringRef s) {
  return llvm::StringSwitch<bool>(s)
      .Cases({"floordiv", "mod", "eq", "ne", "lt", "le", "gt", "ge"}, true)
      .Cases({"and", "or", "not", "min", "max", "select", "true", "false"}, true)
      .Default(false);
}

class ExprParser {
public:
  explicit ExprParser(AsmParser &p) : p(p) {}

  ParseResult parseExpr(Node &out) { return parseOr(out); }

private:
  AsmParser &p;
  /// Open parentheses, function calls and prefix operators around the
  /// current position (see kMaxExprNestingDepth).
  unsigned depth = 0;

  /// Enters one nesting level opened by the token at `loc`; fails with a
  /// diagnostic there beyond kMaxExprNestingDepth. Pair with `leave()`.
  ParseResult enter(SMLoc loc) {
    if (depth >= kMaxExprNestingDepth)
      return p.emitError(loc) << "expression nested too deeply (more than "
                              << kMaxExprNestingDepth
                              << " levels of parentheses, calls and prefix operators)";
    ++depth;
    return success();
  }
  void leave() { --depth; }

  ParseResult binaryLevel(Node &out, int prec, ArrayRef<StringRef> ops,
                          ParseResult (ExprParser::*next)(Node &), bool assoc = true) {
    if ((this->*next)(out))
      return failure();
    bool chained = false; // `out` is this level's chain node
    while (true) {
      StringRef matched;
      for (StringRef kw : ops)
        if (succeeded(p.parseOptionalKeyword(kw))) {
          matched = kw;
          break;
        }
      if (matched.empty()) {
        if (prec == kAdd) {
          if (succeeded(p.parseOptionalPlus()))
            matched = "+";
          else if (succeeded(p.parseOptionalMinus()))
            matched = "-";
        } else if (prec == kMul && succeeded(p.parseOptionalStar())) {
          matched = "*";
        }
      }
      if (matched.empty())
        return success();
      if (!chained) {
        Node chain;
        chain.prec = prec;
        chain.kids.push_back(std::move(out));
        out = std::move(chain);
        chained = true;
      }
      out.kids.emplace_back();
      if ((this->*next)(out.kids.back()))
        return failure();
      out.ops.push_back(matched);
      if (!assoc) // comparisons do not chain
        return success();
    }
  }

  ParseResult parseOr(Node &out) { return binaryLevel(out, kOr, {"or"}, &ExprParser::parseAnd); }
  ParseResult parseAnd(Node &out) { return binaryLevel(out, kAnd, {"and"}, &ExprParser::parseNot); }
  /// A prefix operator (`not x`, `-x`) if one was just parsed at `loc`,
  /// applying to `self`'s level again (right-recursive, one nesting level
  /// each); otherwise the next level.
  ParseResult prefixLevel(Node &out, std::optional<SMLoc> loc, const char *op, int prec,
                          ParseResult (ExprParser::*self)(Node &),
                          ParseResult (ExprParser::*next)(Node &)) {
    if (!loc)
      return (this->*next)(out);
    if (enter(*loc))
      return failure();
    Node kid;
    if ((this->*self)(kid))
      return failure();
    leave();
    out = Node{op, prec, {}, {}};
    out.kids.push_back(std::move(kid));
    return success();
  }
  /// The location of the prefix keyword or `-` just consumed, if any.
  std::optional<SMLoc> optionalPrefix(bool minus) {
    SMLoc loc = p.getCurrentLocation();
    if (minus ? succeeded(p.parseOptionalMinus()) : succeeded(p.parseOptionalKeyword("not")))
      return loc;
    return std::nullopt;
  }
  ParseResult parseNot(Node &out) {
    return prefixLevel(out, optionalPrefix(/*minus=*/false), "not", kNot, &ExprParser::parseNot,
                       &ExprParser::parseCmp);
  }
  ParseResult parseCmp(Node &out) {
    return binaryLevel(out, kCmp, {"eq", "ne", "lt", "le", "gt", "ge"}, &ExprParser::parseAdd,
                       /*assoc=*/false);
  }
  ParseResult parseAdd(Node &out) { return binaryLevel(out, kAdd, {}, &ExprParser::parseMul); }
  ParseResult parseMul(Node &out) {
    return binaryLevel(out, kMul, {"floordiv", "mod"}, &ExprParser::parseUnary);
  }
  ParseResult parseUnary(Node &out) {
    return prefixLevel(out, optionalPrefix(/*minus=*/true), "-", kNeg, &ExprParser::parseUnary,
                       &ExprParser::parseAtom);
  }
  ParseResult parseAtom(Node &out) {
    SMLoc loc = p.getCurrentLocation();
    if (succeeded(p.parseOptionalLParen())) {
      if (enter(loc) || parseExpr(out) || p.parseRParen())
        return failure();
      leave();
      return success();
    }
    if (succeeded(p.parseOptionalKeyword("true"))) {
      out = Node{"true", kAtom, {}, {}};
      return success();
    }
    if (succeeded(p.parseOptionalKeyword("false"))) {
      out = Node{"false", kAtom, {}, {}};
      return success();
    }
    uint64_t value;
    OptionalParseResult intResult = p.parseOptionalInteger(value);
    if (intResult.has_value()) {
      if (failed(*intResult))
        return failure();
      out = Node{std::to_string(value), kAtom, {}, {}};
      return success();
    }
    StringRef name;
    if (failed(p.parseOptionalKeyword(&name)))
      return p.emitError(loc, "expected a symbolic expression (integer, symbol, min(...), "
                              "max(...), select(...) or parenthesised expression)");
    if (name == "min" || name == "max" || name == "select") {
      out = Node{name.str(), kAtom, {}, {}};
      SMLoc open = p.getCurrentLocation();
      if (p.parseLParen() || enter(open))
        return failure();
      do {
        out.kids.emplace_back();
        if (parseExpr(out.kids.back()))
          return failure();
      } while (succeeded(p.parseOptionalComma()));
      if (p.parseRParen())
        return failure();
      leave();
      if (name == "select" && out.kids.size() != 3)
        return p.emitError(loc, "select takes exactly 3 arguments (condition, then, else)");
      if (name != "select" && out.kids.size() < 2)
        return p.emitError(loc) << name << " takes at least 2 arguments";
      return success();
    }
    if (isKeyword(name) || !isIdentifier(name))
      return p.emitError(loc) << "'" << name << "' is not a valid symbol name";
    out = Node{name.str(), kAtom, {}, {}};
    return success();
  }
};

// Printing recurses once per tree level; the parser bounds the depth (a few
// levels per nesting level), chains are printed in a loop.
void print(const Node &n, std::string &os);

void printChild(const Node &kid, int minPrec, std::string &os) {
  bool parens = kid.prec < minPrec;
  if (parens)
    os += '(';
  print(kid, os);
  if (parens)
    os += ')';
}

void print(const Node &n, std::string &os) {
  if (n.prec == kAtom) {
    os += n.op;
    if (!n.kids.empty() || n.op == "min" || n.op == "max" || n.op == "select") {
      os += '(';
      for (size_t i = 0; i < n.kids.size(); ++i) {
        if (i)
          os += ", ";
        print(n.kids[i], os);
      }
      os += ')';
    }
    return;
  }
  if (n.prec == kNeg) {
    // `- -t` prints as `--t` (as the Python printer would), not `-(-t)`:
    // printing never nests deeper than the input, so it parses back.
    os += '-';
    printChild(n.kids[0], kNeg, os);
    return;
  }
  if (n.prec == kNot) {
    os += "not ";
    printChild(n.kids[0], kNot, os);
    return;
  }
  // A chain: the first operand may be of the same level (left-associative,
  // except comparisons), the others must bind tighter.
  bool chain = n.prec != kCmp;
  printChild(n.kids[0], chain ? n.prec : n.prec + 1, os);
  for (size_t i = 1; i < n.kids.size(); ++i) {
    os += ' ';
    os += n.ops[i - 1];
    os += ' ';
    printChild(n.kids[i], n.prec + 1, os);
  }
}

} // namespace

bool isIdentifier(StringRef s) {
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

std::optional<int64_t> asInteger(StringRef s) {
  int64_t v;
  if (s.getAsInteger(10, v))
    return std::nullopt;
  return v;
}

SmallVector<StringRef> symbolsOf(StringRef text) {
  SmallVector<StringRef> out;
  llvm::DenseSet<StringRef> seen;
  size_t i = 0;
  while (i < text.size()) {
    if (llvm::isAlpha(text[i]) || text[i] == '_') {
      size_t j = i;
      while (j < text.size() && (llvm::isAlnum(text[j]) || text[j] == '_'))
        ++j;
      StringRef word = text.slice(i, j);
      if (!isKeyword(word) && seen.insert(word).second)
        out.push_back(word);
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

ParseResult parseSymExprText(AsmParser &p, std::string &out) {
  Node n;
  if (ExprParser(p).parseExpr(n))
    return failure();
  out.clear();
  print(n, out);
  return success();
}

ParseResult parseSymComponentText(AsmParser &p, std::string &out) {
  if (parseSymExprText(p, out))
    return failure();
  if (failed(p.parseOptionalColon()))
    return success();
  std::string stop;
  if (parseSymExprText(p, stop))
    return failure();
  out += ":" + stop;
  if (succeeded(p.parseOptionalColon())) {
    SMLoc loc = p.getCurrentLocation();
    uint64_t step;
    if (p.parseInteger(step))
      return failure();
    if (step == 0)
      return p.emitError(loc, "slice step must be a positive integer");
    if (step != 1)
      out += ":" + std::to_string(step);
  }
  return success();
}

ParseResult parseSymComponentList(AsmParser &p, SmallVectorImpl<std::string> &out) {
  if (p.parseLSquare())
    return failure();
  if (succeeded(p.parseOptionalRSquare()))
    return success();
  do {
    std::string c;
    if (parseSymComponentText(p, c))
      return failure();
    out.push_back(std::move(c));
  } while (succeeded(p.parseOptionalComma()));
  return p.parseRSquare();
}

static SmallVector<StringAttr> toStringAttrs(MLIRContext *ctx, ArrayRef<std::string> texts) {
  SmallVector<StringAttr> attrs;
  for (const std::string &t : texts)
    attrs.push_back(StringAttr::get(ctx, t));
  return attrs;
}

static void printComponents(raw_ostream &os, ArrayRef<StringAttr> components) {
  os << '[';
  llvm::interleave(components, os, [&](StringAttr c) { os << c.getValue(); }, ", ");
  os << ']';
}

ParseResult parseSymIndexList(AsmParser &p, SmallVector<StringAttr> &components) {
  SmallVector<std::string> texts;
  if (parseSymComponentList(p, texts))
    return failure();
  components = toStringAttrs(p.getContext(), texts);
  return success();
}

void printSymIndexList(AsmPrinter &p, ArrayRef<StringAttr> components) {
  printComponents(p.getStream(), components);
}

ParseResult parseSymExpr(AsmParser &p, StringAttr &text) {
  std::string t;
  if (parseSymExprText(p, t))
    return failure();
  text = StringAttr::get(p.getContext(), t);
  return success();
}

void printSymExpr(AsmPrinter &p, StringAttr text) { p.getStream() << text.getValue(); }

static ParseResult parseIndexAttr(OpAsmParser &p, IndexAttr &attr) {
  SmallVector<std::string> texts;
  if (parseSymComponentList(p, texts))
    return failure();
  attr = IndexAttr::get(p.getContext(), toStringAttrs(p.getContext(), texts));
  return success();
}

ParseResult parseDomain(OpAsmParser &p, IndexAttr &domain) { return parseIndexAttr(p, domain); }
void printDomain(OpAsmPrinter &p, Operation *, IndexAttr domain) {
  printComponents(p.getStream(), domain.getComponents());
}
ParseResult parseIndexBrackets(OpAsmParser &p, IndexAttr &index) { return parseIndexAttr(p, index); }
void printIndexBrackets(OpAsmPrinter &p, Operation *, IndexAttr index) {
  printComponents(p.getStream(), index.getComponents());
}

ParseResult parseIndexedOperand(OpAsmParser &p, OpAsmParser::UnresolvedOperand &operand,
                                IndexAttr &index) {
  return failure(p.parseOperand(operand) || parseIndexAttr(p, index));
}
void printIndexedOperand(OpAsmPrinter &p, Operation *, Value operand, IndexAttr index) {
  p << operand;
  printComponents(p.getStream(), index.getComponents());
}

ParseResult parseDims(OpAsmParser &p, ArrayAttr &steps, ArrayAttr &bounds) {
  SmallVector<Attribute> s, b;
  auto one = [&]() -> ParseResult {
    StringRef step, bound;
    if (p.parseKeyword(&step) || p.parseLess() || p.parseKeyword(&bound))
      return failure();
    s.push_back(p.getBuilder().getStringAttr(step));
    b.push_back(p.getBuilder().getStringAttr(bound));
    return success();
  };
  if (p.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, one))
    return failure();
  steps = p.getBuilder().getArrayAttr(s);
  bounds = p.getBuilder().getArrayAttr(b);
  return success();
}

void printDims(OpAsmPrinter &p, Operation *op, ArrayAttr steps, ArrayAttr bounds) {
  printDims(p, op, steps, bounds, ArrayAttr());
}

ParseResult parseDims(OpAsmParser &p, ArrayAttr &steps, ArrayAttr &bounds, ArrayAttr &derived) {
  SmallVector<Attribute> s, b, d;
  bool any = false;
  auto one = [&]() -> ParseResult {
    StringRef step, bound;
    if (p.parseKeyword(&step) || p.parseLess() || p.parseKeyword(&bound))
      return failure();
    std::string text;
    if (succeeded(p.parseOptionalEqual())) {
      if (parseSymExprText(p, text))
        return failure();
      any = true;
    }
    s.push_back(p.getBuilder().getStringAttr(step));
    b.push_back(p.getBuilder().getStringAttr(bound));
    d.push_back(p.getBuilder().getStringAttr(text));
    return success();
  };
  if (p.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, one))
    return failure();
  steps = p.getBuilder().getArrayAttr(s);
  bounds = p.getBuilder().getArrayAttr(b);
  derived = p.getBuilder().getArrayAttr(any ? d : SmallVector<Attribute>());
  return success();
}

void printDims(OpAsmPrinter &p, Operation *, ArrayAttr steps, ArrayAttr bounds, ArrayAttr derived) {
  p << '[';
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i)
      p << ", ";
    p << llvm::cast<StringAttr>(steps[i]).getValue() << " < "
      << llvm::cast<StringAttr>(bounds[i]).getValue();
    if (derived && i < derived.size()) {
      StringRef text = llvm::cast<StringAttr>(derived[i]).getValue();
      if (!text.empty())
        p << " = " << text;
    }
  }
  p << ']';
}

ParseResult parseDepOperands(OpAsmParser &p,
                             SmallVectorImpl<OpAsmParser::UnresolvedOperand> &operands,
                             ArrayAttr &deps) {
  SmallVector<Attribute> depAttrs;
  OpAsmParser::UnresolvedOperand first;
  OptionalParseResult has = p.parseOptionalOperand(first);
  if (has.has_value()) {
    if (failed(*has))
      return failure();
    auto rest = [&](bool isFirst) -> ParseResult {
      OpAsmParser::UnresolvedOperand operand = first;
      if (!isFirst && p.parseOperand(operand))
        return failure();
      IndexAttr dep;
      if (parseIndexAttr(p, dep))
        return failure();
      operands.push_back(operand);
      depAttrs.push_back(dep);
      return success();
    };
    if (rest(true))
      return failure();
    while (succeeded(p.parseOptionalComma()))
      if (rest(false))
        return failure();
  }
  deps = p.getBuilder().getArrayAttr(depAttrs);
  return success();
}

void printDepOperands(OpAsmPrinter &p, Operation *, OperandRange operands, ArrayAttr deps) {
  for (auto [i, v] : llvm::enumerate(operands)) {
    if (i)
      p << ", ";
    p << v;
    if (i < deps.size())
      if (auto dep = llvm::dyn_cast<IndexAttr>(deps[i]))
        printComponents(p.getStream(), dep.getComponents());
  }
}

ParseResult parseMergeBranches(OpAsmParser &p,
                               SmallVectorImpl<OpAsmParser::UnresolvedOperand> &operands,
                               ArrayAttr &deps, ArrayAttr &conds) {
  SmallVector<Attribute> depAttrs, condAttrs;
  auto branch = [&]() -> ParseResult {
    OpAsmParser::UnresolvedOperand operand;
    IndexAttr dep;
    std::string cond;
    if (p.parseOperand(operand) || parseIndexAttr(p, dep) || p.parseKeyword("if") ||
        p.parseLess() || parseSymExprText(p, cond) || p.parseGreater())
      return failure();
    operands.push_back(operand);
    depAttrs.push_back(dep);
    condAttrs.push_back(ExprAttr::get(p.getContext(), p.getBuilder().getStringAttr(cond)));
    return success();
  };
  if (p.parseCommaSeparatedList(branch))
    return failure();
  deps = p.getBuilder().getArrayAttr(depAttrs);
  conds = p.getBuilder().getArrayAttr(condAttrs);
  return success();
}

void printMergeBranches(OpAsmPrinter &p, Operation *, OperandRange operands, ArrayAttr deps,
                        ArrayAttr conds) {
  for (auto [i, v] : llvm::enumerate(operands)) {
    if (i)
      p << ", ";
    p << v;
    if (i < deps.size())
      if (auto dep = llvm::dyn_cast<IndexAttr>(deps[i]))
        printComponents(p.getStream(), dep.getComponents());
    if (i < conds.size())
      if (auto cond = llvm::dyn_cast<ExprAttr>(conds[i]))
        p << " if <" << cond.getText().getValue() << '>';
  }
}

} // namespace tidal
