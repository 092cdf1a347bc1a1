//===- Range.h - ranges of SHARED accesses as polynomials -------*- C++ -*-===//
//
// The ends of a range an access spans or an acquire holds, as polynomials
// with integer coefficients over integer variables (loop variables,
// parameters never assigned, locals assigned only by their declaration),
// and what follows from facts known to be >= 0 (Shared.cpp's checks).
//
//===----------------------------------------------------------------------===//
#ifndef EARTH_TC_RANGE_H
#define EARTH_TC_RANGE_H

#include "clang/AST/Decl.h"
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace earthtc {

// Variables in source order (a deterministic order for the monomials, so
// the text of an inserted acquire is the same on every run).
struct VarLess {
  bool operator()(const clang::VarDecl *A, const clang::VarDecl *B) const;
};
// A product of variables, sorted, with repeats (i * i is {i, i}).
using Mono = std::vector<const clang::VarDecl *>;
struct MonoLess {
  bool operator()(const Mono &A, const Mono &B) const;
};

// A polynomial with integer coefficients in integer variables: Const +
// sum of Coef[m] * m. Ok is false where an expression is not one, or it
// grows past what the checks need (a degree of 4, 32 terms), or a
// coefficient overflows.
struct Poly {
  bool Ok = true;
  int64_t Const = 0;
  std::map<Mono, int64_t, MonoLess> Coef;
  enum { MaxDegree = 4, MaxTerms = 32 };

  static Poly bad();                        // not a polynomial
  static Poly constant(int64_t C);          // C
  static Poly var(const clang::VarDecl *V); // V

  Poly operator+(const Poly &O) const;
  Poly operator-(const Poly &O) const { return *this + O.scaled(-1); }
  Poly operator*(const Poly &O) const;
  Poly scaled(int64_t K) const;
  Poly timesMono(const Mono &M) const;
  // Drops the zero terms; too many terms make it not Ok.
  void trim();
  bool isConst() const { return Ok && Coef.empty(); }
  bool operator==(const Poly &O) const {
    return Ok == O.Ok && Const == O.Const && Coef == O.Coef;
  }
  // The variables it names.
  std::set<const clang::VarDecl *, VarLess> vars() const;
  // Itself as C * v + R, with C and R free of v; false where v has a
  // degree above 1 in a term.
  bool split(const clang::VarDecl *V, Poly &C, Poly &R) const;
};

// Whether C >= 0 follows from Facts (each >= 0): C is a constant >= 0, or
// a * F + D for a fact F, a > 0 and D that follows again (a few steps, and
// a bounded number of tries in all, whatever the nest).
bool nonneg(const Poly &C, const std::vector<Poly> &Facts);

} // namespace earthtc

#endif
