//===- Range.cpp - ranges of SHARED accesses as polynomials ---------------===//
//
// The arithmetic of Range.h: sums, products and scaling that give up (Ok
// false) rather than overflow or grow, and the proof that a polynomial is
// not negative from facts.
//
//===----------------------------------------------------------------------===//
#include "Range.h"
#include <algorithm>

using namespace clang;

namespace earthtc {

bool VarLess::operator()(const VarDecl *A, const VarDecl *B) const {
  unsigned X = A->getLocation().getRawEncoding(),
           Y = B->getLocation().getRawEncoding();
  return X != Y ? X < Y : std::less<const VarDecl *>()(A, B);
}

bool MonoLess::operator()(const Mono &A, const Mono &B) const {
  return std::lexicographical_compare(A.begin(), A.end(), B.begin(), B.end(),
                                      VarLess());
}

Poly Poly::bad() {
  Poly L;
  L.Ok = false;
  return L;
}

Poly Poly::constant(int64_t C) {
  Poly L;
  L.Const = C;
  return L;
}

Poly Poly::var(const VarDecl *V) {
  Poly L;
  L.Coef[{V}] = 1;
  return L;
}

Poly Poly::operator+(const Poly &O) const {
  Poly R = *this;
  R.Ok = Ok && O.Ok;
  R.Ok &= !__builtin_add_overflow(R.Const, O.Const, &R.Const);
  for (const auto &P : O.Coef)
    R.Ok &=
        !__builtin_add_overflow(R.Coef[P.first], P.second, &R.Coef[P.first]);
  R.trim();
  return R;
}

Poly Poly::scaled(int64_t K) const {
  Poly R = *this;
  R.Ok &= !__builtin_mul_overflow(R.Const, K, &R.Const);
  for (auto &P : R.Coef)
    R.Ok &= !__builtin_mul_overflow(P.second, K, &P.second);
  R.trim();
  return R;
}

Poly Poly::operator*(const Poly &O) const {
  Poly R = O.scaled(Const);
  R.Ok &= Ok;
  for (const auto &P : Coef)
    R = R + O.timesMono(P.first).scaled(P.second);
  return R;
}

Poly Poly::timesMono(const Mono &M) const {
  Poly R;
  R.Ok = Ok;
  if (Const)
    R.Coef[M] = Const;
  for (const auto &P : Coef) {
    Mono N = P.first;
    N.insert(N.end(), M.begin(), M.end());
    std::sort(N.begin(), N.end(), VarLess());
    R.Ok &= N.size() <= MaxDegree;
    R.Coef[N] = P.second;
  }
  R.trim();
  return R;
}

void Poly::trim() {
  for (auto It = Coef.begin(); It != Coef.end();)
    It = It->second ? std::next(It) : Coef.erase(It);
  Ok &= Coef.size() <= MaxTerms;
}

std::set<const VarDecl *, VarLess> Poly::vars() const {
  std::set<const VarDecl *, VarLess> S;
  for (const auto &P : Coef)
    S.insert(P.first.begin(), P.first.end());
  return S;
}

bool Poly::split(const VarDecl *V, Poly &C, Poly &R) const {
  C = Poly();
  R = Poly();
  R.Const = Const;
  for (const auto &P : Coef) {
    auto N = std::count(P.first.begin(), P.first.end(), V);
    if (N > 1)
      return false;
    if (!N) {
      R.Coef[P.first] = P.second;
      continue;
    }
    Mono M = P.first;
    M.erase(std::find(M.begin(), M.end(), V));
    if (M.empty())
      C.Const = P.second;
    else
      C.Coef[M] = P.second;
  }
  return true;
}

static bool nonneg(const Poly &C, const std::vector<Poly> &Facts, int Depth,
                   int &Budget) {
  if (!C.Ok)
    return false;
  if (C.isConst())
    return C.Const >= 0;
  if (!Depth || --Budget < 0)
    return false;
  const auto &Lead = *C.Coef.begin();
  for (const Poly &F : Facts) {
    auto It = F.Coef.find(Lead.first);
    if (It == F.Coef.end() || Lead.second % It->second ||
        Lead.second / It->second <= 0)
      continue;
    if (nonneg(C - F.scaled(Lead.second / It->second), Facts, Depth - 1,
               Budget))
      return true;
  }
  return false;
}

bool nonneg(const Poly &C, const std::vector<Poly> &Facts) {
  int Budget = 4096;
  return nonneg(C, Facts, 4, Budget);
}

} // namespace earthtc
