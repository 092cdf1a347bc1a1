//===- Report.cpp - the computed sets, as text and JSON -------------------===//
//
// One block per threaded function: its frame-resident variables, RESTORE
// of each fiber, SAVE of each END_THREAD (by line:col; no CFG block ids, so
// the output is stable across Clang patch versions), and totals.
//
//===----------------------------------------------------------------------===//
#include "EarthTC.h"

using namespace clang;

namespace earthtc {
namespace {

std::string names(const std::vector<const VarDecl *> &Vs) {
  std::string S = "{";
  for (const VarDecl *V : Vs)
    S += " " + V->getNameAsString();
  return S + " }";
}

std::string jsonNames(const std::vector<const VarDecl *> &Vs) {
  std::string S = "[";
  for (size_t I = 0; I < Vs.size(); ++I)
    S += (I ? ", \"" : "\"") + Vs[I]->getNameAsString() + "\"";
  return S + "]";
}

std::string where(ASTContext &Ctx, const Stmt *S) {
  PresumedLoc P = Ctx.getSourceManager().getPresumedLoc(
      Ctx.getSourceManager().getExpansionLoc(S->getBeginLoc()));
  return std::to_string(P.getLine()) + ":" + std::to_string(P.getColumn());
}

std::vector<const VarDecl *> resident(const ThreadedFn &F) {
  std::vector<const VarDecl *> R;
  for (const VarDecl *V : F.Locals)
    if (F.FrameResident.count(V))
      R.push_back(V);
  return R;
}

struct Totals {
  size_t Fibers = 0, Ends = 0, Restored = 0, Saved = 0, Naive = 0;
  void add(const ThreadedFn &F) {
    Fibers += F.Fibers.size();
    Naive += F.Naive;
    for (const Fiber &Fb : F.Fibers)
      Restored += Fb.Restore.size();
    for (const EndSite &S : F.Sites)
      if (!S.EndFunction) {
        Ends++;
        Saved += S.Save.size();
      }
  }
};

} // namespace

std::string reportText(ASTContext &Ctx, const std::vector<ThreadedFn> &Fns) {
  std::string S;
  Totals All;
  for (const ThreadedFn &F : Fns) {
    S += "function " + F.Name + ": frame-resident " + names(resident(F)) + "\n";
    for (const Fiber &Fb : F.Fibers)
      S += "  fiber " + Fb.Name + " restore " + names(Fb.Restore) + "\n";
    for (const EndSite &E : F.Sites)
      S += "  " + std::string(E.EndFunction ? "END_FUNCTION" : "END_THREAD") +
           " at " + where(Ctx, E.Call) + " in fiber " + F.Fibers[E.Fiber].Name +
           (E.EndFunction ? "\n" : " save " + names(E.Save) + "\n");
    Totals T;
    T.add(F);
    All.add(F);
    S += "  total: fibers=" + std::to_string(T.Fibers) +
         " end_threads=" + std::to_string(T.Ends) +
         " restored=" + std::to_string(T.Restored) +
         " saved=" + std::to_string(T.Saved) +
         " naive=" + std::to_string(T.Naive) + "\n";
  }
  S += "earth_tc: functions=" + std::to_string(Fns.size()) +
       " fibers=" + std::to_string(All.Fibers) +
       " end_threads=" + std::to_string(All.Ends) +
       " restored=" + std::to_string(All.Restored) +
       " saved=" + std::to_string(All.Saved) +
       " naive=" + std::to_string(All.Naive) + "\n";
  return S;
}

std::string reportJson(ASTContext &Ctx, const std::vector<ThreadedFn> &Fns) {
  std::string S = "{\"functions\": [";
  for (size_t I = 0; I < Fns.size(); ++I) {
    const ThreadedFn &F = Fns[I];
    S += std::string(I ? ", " : "") + "{\"name\": \"" + F.Name +
         "\", \"frame_resident\": " + jsonNames(resident(F)) +
         ", \"fibers\": [";
    for (size_t K = 0; K < F.Fibers.size(); ++K)
      S += std::string(K ? ", " : "") + "{\"name\": \"" + F.Fibers[K].Name +
           "\", \"restore\": " + jsonNames(F.Fibers[K].Restore) + "}";
    S += "], \"ends\": [";
    for (size_t K = 0; K < F.Sites.size(); ++K) {
      const EndSite &E = F.Sites[K];
      S += std::string(K ? ", " : "") + "{\"kind\": \"" +
           (E.EndFunction ? "END_FUNCTION" : "END_THREAD") + "\", \"at\": \"" +
           where(Ctx, E.Call) + "\", \"fiber\": \"" + F.Fibers[E.Fiber].Name +
           "\", \"save\": " + jsonNames(E.Save) + "}";
    }
    Totals T;
    T.add(F);
    S += "], \"restored\": " + std::to_string(T.Restored) +
         ", \"saved\": " + std::to_string(T.Saved) +
         ", \"naive\": " + std::to_string(T.Naive) + "}";
  }
  return S + "]}\n";
}

} // namespace earthtc
