//===- Plugin.cpp - earth_tc: registration, options, driver ---------------===//
//
// clang-14 -fsyntax-only -DEARTH_TC_PARSE -fplugin=earth_tc.so
//   -fplugin-arg-earth_tc-emit=out.c [-fplugin-arg-earth_tc-save-all]
//   [-fplugin-arg-earth_tc-stats=FILE|-] [-fplugin-arg-earth_tc-json=FILE]
//   [-fplugin-arg-earth_tc-poison] [-fplugin-arg-earth_tc-drop=VAR]
//   [-fplugin-arg-earth_tc-drop-save=VAR]
//   [-fplugin-arg-earth_tc-insert=FILE]  prog.tc
//
//===----------------------------------------------------------------------===//
#include "EarthTC.h"
#include "clang/AST/ASTConsumer.h"
#include "clang/AST/Attr.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace earthtc {

void error(ASTContext &Ctx, SourceLocation Loc, const std::string &What,
           const std::string &Fix) {
  DiagnosticsEngine &D = Ctx.getDiagnostics();
  unsigned ID = D.getCustomDiagID(DiagnosticsEngine::Error, "%0");
  std::string Msg = What;
  if (!Fix.empty())
    Msg += "; fix: " + Fix;
  D.Report(Ctx.getSourceManager().getFileLoc(Loc), ID) << Msg;
}

bool isThreaded(const FunctionDecl *FD) {
  for (const auto *D = FD; D; D = D->getPreviousDecl())
    for (const auto *A : D->specific_attrs<AnnotateAttr>())
      if (A->getAnnotation() == "earth_threaded")
        return true;
  return false;
}

unsigned fileOffset(const SourceManager &SM, SourceLocation L) {
  return SM.getFileOffset(SM.getExpansionLoc(L));
}

namespace {

bool writeFile(const std::string &Path, const std::string &Text) {
  if (Path == "-") {
    llvm::outs() << Text;
    return true;
  }
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC, llvm::sys::fs::OF_Text);
  if (EC) {
    llvm::errs() << "earth_tc: cannot write " << Path << ": " << EC.message()
                 << "\n";
    return false;
  }
  OS << Text;
  return true;
}

class Consumer : public ASTConsumer {
  CompilerInstance &CI;
  Options O;

public:
  Consumer(CompilerInstance &CI, Options O) : CI(CI), O(std::move(O)) {}

  void HandleTranslationUnit(ASTContext &Ctx) override {
    if (Ctx.getDiagnostics().hasErrorOccurred())
      return;
    SourceManager &SM = Ctx.getSourceManager();
    checkGlobalPlacement(Ctx);
    checkFileUses(Ctx);
    checkSharedInC(Ctx);
    std::vector<ThreadedFn> Fns;
    std::vector<const FunctionDecl *> Protos;
    for (Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
      auto *FD = dyn_cast<FunctionDecl>(D);
      if (!FD || !isThreaded(FD))
        continue;
      if (!FD->doesThisDeclarationHaveABody()) {
        Protos.push_back(FD); // in a header too: Emit.cpp inlines it
        continue;
      }
      if (!SM.isInMainFile(SM.getExpansionLoc(FD->getLocation()))) {
        error(Ctx, FD->getLocation(),
              "THREADED function '" + FD->getNameAsString() +
                  "' is defined in a header",
              "define it in a .tc file and keep only its prototype "
              "'THREADED " +
                  FD->getNameAsString() + "(...);' in the header");
        continue;
      }
      ThreadedFn F;
      F.FD = FD;
      F.Name = FD->getNameAsString();
      F.IsMain = F.Name == "main";
      F.TFunc = F.IsMain ? "tc_main" : F.Name;
      check(CI, F);
      if (!F.Failed)
        checkShared(CI, F, !O.InsertPath.empty());
      if (!F.Failed)
        checkFiberOrder(CI, F);
      if (!F.Failed)
        analyze(CI, F, O);
      Fns.push_back(std::move(F));
    }
    if (Ctx.getDiagnostics().hasErrorOccurred())
      return;
    // Acquires to insert: the source with them goes to earthcc, which
    // translates it instead (no C now).
    bool Insert = false;
    for (const ThreadedFn &F : Fns)
      Insert |= !F.Inserts.empty();
    if (Insert) {
      if (!writeFile(O.InsertPath, insertedSource(CI, Fns)))
        Ctx.getDiagnostics().Report(Ctx.getDiagnostics().getCustomDiagID(
            DiagnosticsEngine::Error, "earth_tc: cannot write %0"))
            << O.InsertPath;
      return;
    }
    std::string Out;
    if (!emit(CI, Fns, Protos, O, Out))
      return;
    if (!O.EmitPath.empty() && !writeFile(O.EmitPath, Out))
      Ctx.getDiagnostics().Report(Ctx.getDiagnostics().getCustomDiagID(
          DiagnosticsEngine::Error, "earth_tc: cannot write output"));
    if (!O.StatsPath.empty())
      writeFile(O.StatsPath, reportText(Ctx, Fns));
    if (!O.JsonPath.empty())
      writeFile(O.JsonPath, reportJson(Ctx, Fns));
  }
};

class Action : public PluginASTAction {
  Options O;

protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI,
                                                 llvm::StringRef) override {
    return std::make_unique<Consumer>(CI, O);
  }

  bool ParseArgs(const CompilerInstance &CI,
                 const std::vector<std::string> &Args) override {
    for (const std::string &A : Args) {
      llvm::StringRef S(A);
      if (S == "save-all")
        O.SaveAll = true;
      else if (S == "poison")
        O.Poison = true;
      else if (S.consume_front("emit="))
        O.EmitPath = S.str();
      else if (S.consume_front("stats="))
        O.StatsPath = S.str();
      else if (S.consume_front("json="))
        O.JsonPath = S.str();
      else if (S.consume_front("insert="))
        O.InsertPath = S.str();
      else if (S.consume_front("drop-save="))
        O.DropSave.insert(S.str());
      else if (S.consume_front("drop="))
        O.DropRestore.insert(S.str());
      else {
        DiagnosticsEngine &D = CI.getDiagnostics();
        D.Report(D.getCustomDiagID(
            DiagnosticsEngine::Error,
            "earth_tc: unknown plugin argument '%0' (known: emit=FILE, "
            "save-all, stats=FILE, json=FILE, poison, drop=VAR, "
            "drop-save=VAR, insert=FILE)"))
            << A;
        return false;
      }
    }
    return true;
  }

  ActionType getActionType() override { return AddAfterMainAction; }
};

} // namespace
} // namespace earthtc

static clang::FrontendPluginRegistry::Add<earthtc::Action>
    X("earth_tc", "Threaded-C to C with minimal fiber save/restore sets");
