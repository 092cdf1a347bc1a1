//===- Sites.cpp - the source table of the generated C
//---------------------===//
//
// One array of struct earth_src_row (earth.h) per translation unit, in the
// earth_src section: a row for the start of each fiber (fiber 0's row also
// gives the frame's SYNC_SLOTS), each INIT_SYNC / SPAWN (with the fiber it
// names), INVOKE, TOKEN, END_FUNCTION, and each split-phase operation as
// the user wrote it (DATA_RSYNC_I, SYNC, ...), with file:line. The runtime
// reads it only to word its messages (runtime/base/srctab.c).
//
//===----------------------------------------------------------------------===//
#include "EarthTC.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Lex/Lexer.h"
#include <tuple>

using namespace clang;

namespace earthtc {
namespace {

std::string cString(llvm::StringRef S) {
  std::string Q = "\"";
  for (char C : S) {
    if (C == '"' || C == '\\')
      Q += '\\';
    if ((unsigned char)C < 0x20)
      continue;
    Q += C;
  }
  return Q + "\"";
}

// The runtime functions a split-phase operation reaches.
bool isOpCall(llvm::StringRef N) {
  if (N.startswith("tc_dsm_")) // ACQUIRE_x_N_SYNC, RELEASE_N_SYNC
    return true;
  if (!N.consume_front("earth_"))
    return false;
  for (const char *P :
       {"get_", "data_", "blkmov_", "incr_", "barrier", "allreduce", "dsm_"})
    if (N.startswith(P))
      return true;
  return N == "sync" || N == "rsync" || N == "spawn";
}

struct Row {
  unsigned Fiber;
  int Target = -1;
  std::string Op; // empty: the fiber's start
  PresumedLoc Where;
  int Slot = -1;
};

class OpSites : public RecursiveASTVisitor<OpSites> {
  ASTContext &Ctx;
  const ThreadedFn &F;

public:
  std::vector<Row> Rows;
  OpSites(ASTContext &Ctx, const ThreadedFn &F) : Ctx(Ctx), F(F) {}

  unsigned fiberAt(SourceLocation L) {
    unsigned Off = fileOffset(Ctx.getSourceManager(), L), R = 0;
    for (size_t I = 1; I < F.Fibers.size(); ++I)
      if (F.Fibers[I].Offset <= Off)
        R = I;
    return R;
  }

  bool VisitCallExpr(CallExpr *C) {
    const FunctionDecl *FD = C->getDirectCallee();
    if (!FD || !isOpCall(FD->getName()))
      return true;
    const SourceManager &SM = Ctx.getSourceManager();
    SourceLocation L = SM.getExpansionLoc(C->getBeginLoc());
    std::string Op;
    if (C->getBeginLoc().isMacroID()) {
      unsigned Len = Lexer::MeasureTokenLength(L, SM, Ctx.getLangOpts());
      Op = std::string(SM.getCharacterData(L), Len);
    } else {
      Op = FD->getName().drop_front(6).upper();
    }
    Rows.push_back({fiberAt(L), -1, Op, SM.getPresumedLoc(L), -1});
    return true;
  }
};

const char *markerOp(MarkerKind K) {
  switch (K) {
  case MarkerKind::InitSync:
    return "INIT_SYNC";
  case MarkerKind::Spawn:
    return "SPAWN";
  case MarkerKind::EndFunction:
    return "END_FUNCTION";
  case MarkerKind::Invoke:
    return "INVOKE";
  case MarkerKind::Token:
    return "TOKEN";
  default:
    return nullptr;
  }
}

} // namespace

std::string sourceTable(CompilerInstance &CI,
                        const std::vector<ThreadedFn> &Fns) {
  ASTContext &Ctx = CI.getASTContext();
  const SourceManager &SM = Ctx.getSourceManager();
  std::string Out;
  for (const ThreadedFn &F : Fns) {
    std::vector<Row> Rows;
    for (size_t K = 0; K < F.Fibers.size(); ++K) {
      SourceLocation L =
          K ? F.Fibers[K].Label->getIdentLoc() : F.FD->getLocation();
      Rows.push_back(
          {(unsigned)K, -1, "", SM.getPresumedLoc(SM.getExpansionLoc(L)), -1});
    }
    for (const Marker &M : F.Markers) {
      const char *Op = markerOp(M.Kind);
      if (!Op)
        continue;
      Row R{M.Fiber, M.Target, Op,
            SM.getPresumedLoc(SM.getExpansionLoc(M.Call->getBeginLoc())), -1};
      if (M.Kind == MarkerKind::InitSync && M.Call->getNumArgs() > 0)
        if (auto V = M.Call->getArg(0)->getIntegerConstantExpr(Ctx))
          R.Slot = (int)V->getExtValue();
      Rows.push_back(R);
    }
    OpSites S(Ctx, F);
    S.TraverseStmt(F.FD->getBody());
    std::set<std::tuple<unsigned, std::string, unsigned>> Seen;
    for (const Row &R : S.Rows)
      if (Seen.insert({R.Fiber, R.Op, R.Where.getLine()}).second)
        Rows.push_back(R);

    std::string Frame = "struct tc_frame_" + F.Name;
    for (const Row &R : Rows) {
      if (R.Where.isInvalid())
        continue;
      std::string Slot = std::to_string(R.Slot), At = "0";
      if (R.Op.empty() && R.Fiber == 0) {
        Slot = F.Slots ? std::to_string(F.NumSlots) : "-1";
        if (F.Slots)
          At = "__builtin_offsetof(" + Frame + ", " + F.Field.at(F.Slots) + ")";
      }
      Out += "\t{" + fiberFnName(F, R.Fiber) + ", " +
             (R.Target >= 0 ? fiberFnName(F, R.Target) : "0") + ", " +
             cString(F.Name) + ", " + cString(F.Fibers[R.Fiber].Name) + ", " +
             (R.Op.empty() ? "0" : cString(R.Op)) + ", " +
             cString(R.Where.getFilename()) + ", " +
             std::to_string(R.Where.getLine()) + ", " + Slot + ", " + At +
             "},\n";
    }
  }
  if (Out.empty())
    return Out;
  return "\n/* The source table: the runtime names fibers, slots and "
         "operations by it. */\n"
         "static const struct earth_src_row tc_src_rows[] EARTH_SRC_ROWS = "
         "{\n" +
         Out + "};\n";
}

} // namespace earthtc
