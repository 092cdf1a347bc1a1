//===- Emit.cpp - Threaded-C to C against earth.h -------------------------===//
//
// Rewrites the main file in place (clang::Rewriter), so ordinary C is left
// as written and #line directives keep diagnostics on the .tc lines. Per
// threaded function NAME:
//
//   struct tc_args_NAME  { parameters };            // INVOKE/TOKEN block
//   struct tc_frame_NAME { struct tc_args_NAME tc_a; saved and
//                          frame-resident variables, SYNC_SLOTS };
//   static void tc_fiber_NAME_<fiber>(void *) ...    // one per fiber
//   EARTH_THREADED_FUNCTION(NAME, tc_fiber_NAME_0, ...);
//   static void tc_run_NAME(struct tc_frame_NAME *tc_f, int tc_fiber)
//   { parameters as locals; switch (tc_fiber) { case k: goto THREAD_k; }
//     restore(0); body }
//
// At each fiber label the RESTORE set is loaded from the frame; each
// END_THREAD() stores its SAVE set and returns; END_FUNCTION() frees the
// frame; frame-resident variables are accessed as tc_f->x everywhere;
// nested variables that hide a saved one get their new names. Headers with
// THREADED prototypes are inlined at their #include (inlineHeaders).
//
//===----------------------------------------------------------------------===//
#include "EarthTC.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace earthtc {
std::string quoted(llvm::StringRef Name) {
  std::string Q = "\"";
  for (char C : Name) {
    if (C == '"' || C == '\\')
      Q += '\\';
    Q += C;
  }
  return Q + "\"";
}

namespace {

class Emitter {
  CompilerInstance &CI;
  ASTContext &Ctx;
  SourceManager &SM;
  const Options &O;
  Rewriter RW;
  PrintingPolicy PP;
  std::set<std::string> ArgsDone;
  std::set<FileID> Headers; // hold THREADED prototypes: inlined
  bool Ok = true;
  bool Shared; // the file uses shared memory: main under earth_dsm_main

public:
  Emitter(CompilerInstance &CI, const Options &O)
      : CI(CI), Ctx(CI.getASTContext()), SM(Ctx.getSourceManager()), O(O),
        RW(SM, CI.getLangOpts()), PP(CI.getLangOpts()),
        Shared(fileUsesShared(Ctx)) {
    PP.SuppressTagKeyword = false;
  }

  void fail(SourceLocation L, const std::string &What, const std::string &Fix) {
    error(Ctx, L, What, Fix);
    Ok = false;
  }

  std::string decl(QualType T, const std::string &Name) {
    std::string S;
    llvm::raw_string_ostream OS(S);
    T.print(OS, PP, Name);
    // SHARED's two tags print as attributes where Clang kept no macro
    // name: the generated C has no tags (SHARED is empty there).
    for (size_t At;
         (At = S.find(" __attribute__((btf_type_tag))")) != std::string::npos;)
      S.erase(At, 30);
    return S;
  }

  // A file name as a C string literal, for #line.
  std::string lineDirective(SourceLocation L) {
    PresumedLoc P = SM.getPresumedLoc(SM.getExpansionLoc(L));
    return "\n#line " + std::to_string(P.getLine()) + " " +
           quoted(P.getFilename()) + "\n";
  }

  std::string argsStruct(const FunctionDecl *FD) {
    std::string N = FD->getNameAsString();
    std::string S = "struct tc_args_" + N + " {";
    if (N == "main") {
      auto Ps = FD->parameters();
      S += " int " + (Ps.size() == 2 ? Ps[0]->getNameAsString() : "tc_argc") +
           "; char **" +
           (Ps.size() == 2 ? Ps[1]->getNameAsString() : "tc_argv") + ";";
    } else if (FD->param_empty()) {
      S += " char tc_unused;";
    }
    if (N != "main")
      for (const ParmVarDecl *P : FD->parameters())
        S += " " +
             decl(P->getType().getUnqualifiedType(), P->getNameAsString()) +
             ";";
    return S + " }";
  }

  std::string fieldRef(const ThreadedFn &F, const VarDecl *V) {
    if (isa<ParmVarDecl>(V))
      return "tc_f->tc_a." + V->getNameAsString();
    return "tc_f->" + F.Field.at(V);
  }

  // What a use of V becomes: its frame field, its new name, or itself.
  std::string refText(const ThreadedFn &F, const VarDecl *V) {
    if (F.FrameResident.count(V))
      return fieldRef(F, V);
    auto It = F.Renamed.find(V);
    return It != F.Renamed.end() ? It->second : V->getNameAsString();
  }

  std::string fiberFn(const ThreadedFn &F, unsigned K) {
    return fiberFnName(F, K);
  }

  std::string restoreText(const ThreadedFn &F, unsigned K) {
    const Fiber &Fb = F.Fibers[K];
    std::string S;
    if (O.Poison)
      for (const VarDecl *V : Fb.InScope)
        S += " __builtin_memset(&" + V->getNameAsString() + ", 0xA5, sizeof " +
             V->getNameAsString() + ");";
    S += " TC_STATS_FIBER(" + std::to_string(Fb.Restore.size()) + ");";
    for (const VarDecl *V : Fb.Restore)
      S += " " + V->getNameAsString() + " = " + fieldRef(F, V) + ";";
    return S + " ";
  }

  // Arguments of a macro invocation, as rewritten so far.
  std::vector<std::string> macroArgs(CharSourceRange R) {
    std::string T = RW.getRewrittenText(R);
    std::vector<std::string> Args;
    size_t I = T.find('(');
    if (I == std::string::npos)
      return Args;
    int Depth = 0;
    std::string Cur;
    char Quote = 0;
    for (++I; I < T.size(); ++I) {
      char C = T[I];
      if (Quote) {
        Cur += C;
        if (C == '\\' && I + 1 < T.size())
          Cur += T[++I];
        else if (C == Quote)
          Quote = 0;
        continue;
      }
      if (C == '"' || C == '\'') {
        Quote = C;
        Cur += C;
      } else if (C == '(' || C == '[' || C == '{') {
        Depth++;
        Cur += C;
      } else if ((C == ')' || C == ']' || C == '}') && Depth > 0) {
        Depth--;
        Cur += C;
      } else if (C == ')' || (C == ',' && Depth == 0)) {
        llvm::StringRef A(Cur);
        A = A.trim();
        if (!A.empty() || C == ',' || !Args.empty())
          Args.push_back(A.str());
        Cur.clear();
        if (C == ')')
          break;
      } else {
        Cur += C;
      }
    }
    return Args;
  }

  std::string joinFrom(const std::vector<std::string> &A, size_t From) {
    std::string S;
    for (size_t I = From; I < A.size(); ++I)
      S += (I > From ? ", " : "") + A[I];
    return S.empty() ? "0" : S;
  }

  void rewriteFrameRefs(ThreadedFn &F);
  void rewriteDecls(ThreadedFn &F);
  void rewriteMarkers(ThreadedFn &F);
  void function(ThreadedFn &F);
  void prototype(const FunctionDecl *FD);
  void inlineHeaders();
  bool result(std::string &Out);
};

// The uses and declarations the output changes: of frame-resident
// variables (Refs, Decls: whole statements) and of renamed ones (Refs,
// Names: the name in a declaration that is otherwise kept).
class RefVisitor : public RecursiveASTVisitor<RefVisitor> {
public:
  std::vector<const DeclRefExpr *> Refs;
  std::vector<const DeclStmt *> Decls;
  std::vector<const VarDecl *> Names;
  std::set<const Stmt *> ForInits;
  const ThreadedFn &F;
  explicit RefVisitor(const ThreadedFn &F) : F(F) {}
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (const auto *V = dyn_cast<VarDecl>(E->getDecl()))
      if ((F.FrameResident.count(V) && V != F.Slots) || F.Renamed.count(V))
        Refs.push_back(E);
    return true;
  }
  bool VisitDeclStmt(DeclStmt *S) {
    bool Whole = llvm::any_of(S->decls(), [&](const Decl *D) {
      const auto *V = dyn_cast<VarDecl>(D);
      return V && F.FrameResident.count(V);
    });
    if (Whole)
      Decls.push_back(S);
    else
      for (const Decl *D : S->decls())
        if (const auto *V = dyn_cast<VarDecl>(D))
          if (F.Renamed.count(V))
            Names.push_back(V);
    return true;
  }
  bool VisitForStmt(ForStmt *S) {
    if (S->getInit())
      ForInits.insert(S->getInit());
    return true;
  }
};

void Emitter::rewriteFrameRefs(ThreadedFn &F) {
  RefVisitor V(F);
  V.TraverseStmt(const_cast<Stmt *>(F.FD->getBody()));
  std::set<unsigned> Done;
  for (const DeclRefExpr *E : V.Refs) {
    SourceLocation L = E->getLocation();
    const auto *Var = cast<VarDecl>(E->getDecl());
    // Through macro arguments only, to where the name is written; a name
    // in a macro body (also one expanded inside another macro's argument)
    // cannot be rewritten for this one use.
    bool InBody = false;
    SourceLocation Use = L;
    while (L.isMacroID() && !InBody) {
      InBody = !SM.isMacroArgExpansion(L);
      if (!InBody)
        L = SM.getImmediateSpellingLoc(L);
    }
    if (InBody) {
      fail(Use,
           "variable '" + Var->getNameAsString() +
               (F.FrameResident.count(Var)
                    ? "' lives in the frame (its address is taken, or it "
                      "is an array or const)"
                    : "' hides a variable that an END_THREAD() in its "
                      "scope saves, so it is renamed,") +
               " but is named inside a macro body",
           "pass it to the macro as an argument");
      continue;
    }
    if (!SM.isInMainFile(L) || !Done.insert(SM.getFileOffset(L)).second)
      continue;
    RW.ReplaceText(L, Var->getName().size(), refText(F, Var));
  }
  for (const VarDecl *Var : V.Names) {
    SourceLocation L = Var->getLocation();
    if (L.isMacroID() || !SM.isInMainFile(L)) {
      fail(L,
           "variable '" + Var->getNameAsString() +
               "' hides a variable that an END_THREAD() in its scope saves, "
               "so it is renamed, but it is declared by a macro",
           "rename it in the source");
      continue;
    }
    RW.ReplaceText(L, Var->getName().size(), F.Renamed.at(Var));
  }
  for (const DeclStmt *S : V.Decls) {
    bool InFor = V.ForInits.count(S);
    std::string Text;
    for (const Decl *D : S->decls()) {
      const auto *Var = dyn_cast<VarDecl>(D);
      if (!Var)
        continue;
      std::string Init;
      bool Brace = false;
      if (const Expr *I = Var->getInit()) {
        CharSourceRange R = Lexer::makeFileCharRange(
            CharSourceRange::getTokenRange(I->getSourceRange()), SM,
            CI.getLangOpts());
        if (R.isInvalid()) {
          fail(I->getBeginLoc(),
               "cannot rewrite the initializer of '" + Var->getNameAsString() +
                   "'",
               "assign the variable in a separate statement");
          continue;
        }
        Init = RW.getRewrittenText(R);
        Brace = !Init.empty() && Init[0] == '{';
      }
      std::string Part;
      if (Var == F.Slots) {
        Part = "";
      } else if (F.FrameResident.count(Var)) {
        if (Var->hasInit()) {
          QualType T = Var->getType();
          if (!T->isArrayType() && !Brace &&
              !isa<InitListExpr>(Var->getInit()) && !T.isConstQualified())
            Part = fieldRef(F, Var) + " = " + Init;
          else
            Part = "__builtin_memcpy((void *)&" + fieldRef(F, Var) + ", &(" +
                   decl(T.getUnqualifiedType(), "") + ")" +
                   (Brace ? Init : "{" + Init + "}") + ", sizeof " +
                   fieldRef(F, Var) + ")";
        }
      } else {
        if (InFor) {
          fail(Var->getLocation(),
               "cannot mix frame-resident and other variables in a for "
               "initializer",
               "declare '" + Var->getNameAsString() + "' before the loop");
          continue;
        }
        Part = (Var->isStaticLocal() ? "static " : "") +
               decl(Var->getType(), refText(F, Var)) +
               (Var->hasInit() ? " = " + Init : "");
      }
      if (Part.empty())
        continue;
      if (InFor)
        Text += (Text.empty() ? "" : ", ") + Part;
      else
        Text += Part + "; ";
    }
    if (InFor)
      Text += ";";
    SourceLocation B = SM.getExpansionLoc(S->getBeginLoc());
    SourceLocation E = SM.getExpansionLoc(S->getEndLoc());
    RW.ReplaceText(CharSourceRange::getTokenRange(B, E),
                   Text.empty() ? ";" : Text);
  }
}

void Emitter::rewriteMarkers(ThreadedFn &F) {
  for (const Marker &M : F.Markers) {
    if (M.Kind == MarkerKind::SlotIndex)
      continue;
    CharSourceRange R = SM.getExpansionRange(M.Call->getBeginLoc());
    std::string T;
    switch (M.Kind) {
    case MarkerKind::EndThread: {
      const EndSite *S = nullptr;
      for (const EndSite &E : F.Sites)
        if (E.Call == M.Call)
          S = &E;
      T = "do {";
      size_t N = S ? S->Save.size() : 0;
      if (S)
        for (const VarDecl *V : S->Save)
          T += " " + fieldRef(F, V) + " = " + V->getNameAsString() + ";";
      T += " TC_STATS_SAVE(" + std::to_string(N) + "); return; } while (0)";
      break;
    }
    case MarkerKind::EndFunction:
      T = Shared && F.IsMain ? "do { earth_end_function(tc_f); "
                               "tc_dsm_main_ended(); return; } while (0)"
                             : "do { earth_end_function(tc_f); return; } "
                               "while (0)";
      break;
    case MarkerKind::InitSync: {
      auto A = macroArgs(R);
      if (A.size() != 4 || M.Target < 0)
        continue;
      T = "earth_slot_init(&SYNC_SLOTS[" + A[0] + "], " + A[1] + ", " + A[2] +
          ", " + fiberFn(F, M.Target) + ", tc_f)";
      break;
    }
    case MarkerKind::Spawn:
      if (M.Target < 0)
        continue;
      T = "earth_spawn(" + fiberFn(F, M.Target) + ", tc_f)";
      break;
    case MarkerKind::Invoke:
    case MarkerKind::Token: {
      auto A = macroArgs(R);
      bool Inv = M.Kind == MarkerKind::Invoke;
      size_t FI = Inv ? 1 : 0;
      if (A.size() < FI + 1)
        continue;
      std::string Callee = A[FI], ST = "struct tc_args_" + Callee;
      std::string Blk = "&(" + ST + "){" + joinFrom(A, FI + 1) + "}";
      T = Inv ? "earth_invoke((unsigned)(" + A[0] + "), &" + Callee + ", " +
                    Blk + ", sizeof(" + ST + "))"
              : "earth_token(&" + Callee + ", " + Blk + ", sizeof(" + ST + "))";
      break;
    }
    case MarkerKind::SlotIndex:
      break;
    }
    RW.ReplaceText(R, T);
  }
}

void Emitter::function(ThreadedFn &F) {
  const auto *Body = cast<CompoundStmt>(F.FD->getBody());
  rewriteFrameRefs(F);
  rewriteMarkers(F);
  for (size_t K = 1; K < F.Fibers.size(); ++K) {
    const Stmt *Sub = F.Fibers[K].Label->getSubStmt();
    RW.InsertTextBefore(SM.getExpansionLoc(Sub->getBeginLoc()),
                        restoreText(F, K));
  }

  std::string N = F.Name, P;
  if (!ArgsDone.count(N))
    P += argsStruct(F.FD) + ";\n";
  ArgsDone.insert(N);
  P += "struct tc_frame_" + N + " {\n\tstruct tc_args_" + N + " tc_a;\n";
  for (const VarDecl *V : F.Locals)
    if (F.Field.count(V))
      // Qualifiers kept (const, volatile, _Atomic): the field is the
      // variable; a const one is initialized by memcpy above.
      P += "\t" + decl(V->getType(), F.Field.at(V)) + ";\n";
  P += "};\n";
  std::string Run = "tc_run_" + N, Frame = "struct tc_frame_" + N;
  P += "static void " + Run + "(" + Frame + " *tc_f, int tc_fiber);\n";
  for (size_t K = 0; K < F.Fibers.size(); ++K)
    P += "static void " + fiberFn(F, K) + "(void *tc_p) { " + Run + "(tc_p, " +
         std::to_string(K) + "); }\n";
  P += "EARTH_THREADED_FUNCTION(" + F.TFunc + ", " + fiberFn(F, 0) + ", " +
       Frame + ", sizeof(struct tc_args_" + N + "));\n";
  P += "static void " + Run + "(" + Frame + " *tc_f, int tc_fiber)\n{\n";
  for (const ParmVarDecl *Pm : F.FD->parameters())
    if (!F.FrameResident.count(Pm))
      P += "\t" +
           decl(Pm->getType().getUnqualifiedType(), Pm->getNameAsString()) +
           " __attribute__((unused));\n";
  if (F.Slots)
    P += "\tearth_slot *const SYNC_SLOTS __attribute__((unused)) = "
         "tc_f->" +
         F.Field.at(F.Slots) + ";\n";
  if (F.Fibers.size() > 1) {
    P += "\tswitch (tc_fiber) {\n";
    for (size_t K = 1; K < F.Fibers.size(); ++K)
      P += "\tcase " + std::to_string(K) + ": goto " + F.Fibers[K].Name + ";\n";
    P += "\tdefault: break;\n\t}\n";
  } else {
    P += "\t(void)tc_fiber;\n";
  }
  P += "\t" + restoreText(F, 0) + lineDirective(Body->getLBracLoc());
  SourceLocation Begin = SM.getExpansionLoc(F.FD->getBeginLoc());
  RW.ReplaceText(CharSourceRange::getTokenRange(Begin, Body->getLBracLoc()), P);

  if (F.IsMain) {
    std::string M = "\nint main(int argc, char **argv)\n{\n"
                    "\tint tc_rc = " +
                    std::string(Shared ? "tc_dsm_main" : "earth_main") +
                    "(argc, argv, &tc_main);\n"
                    "\ttc_stats_report(argv[0]);\n\treturn tc_rc;\n}" +
                    lineDirective(Body->getRBracLoc());
    RW.InsertTextAfterToken(Body->getRBracLoc(), M);
  }
}

void Emitter::prototype(const FunctionDecl *FD) {
  std::string N = FD->getNameAsString();
  if (N == "main")
    return;
  std::string T;
  if (!ArgsDone.count(N))
    T += argsStruct(FD) + "; ";
  ArgsDone.insert(N);
  T += "extern const struct earth_tfunc " + N;
  SourceLocation B = SM.getExpansionLoc(FD->getBeginLoc());
  SourceLocation E = SM.getExpansionLoc(FD->getEndLoc());
  RW.ReplaceText(CharSourceRange::getTokenRange(B, E), T);
  if (!SM.isInMainFile(B))
    Headers.insert(SM.getFileID(B));
}

// A header with THREADED prototypes cannot be compiled as it is (THREADED
// f(...); declares a function, the generated C an earth_tfunc object), so
// its rewritten text replaces its #include line, and so on up to the main
// file; #line directives keep the positions. Deepest headers first.
void Emitter::inlineHeaders() {
  std::map<FileID, unsigned> Depth;
  for (FileID H : Headers)
    for (FileID F = H; F.isValid() && F != SM.getMainFileID();
         F = SM.getFileID(SM.getIncludeLoc(F))) {
      unsigned D = 0;
      for (SourceLocation L = SM.getIncludeLoc(F); L.isValid();
           L = SM.getIncludeLoc(SM.getFileID(L)))
        ++D;
      Depth[F] = D;
    }
  std::vector<FileID> Order;
  for (const auto &P : Depth)
    Order.push_back(P.first);
  std::stable_sort(Order.begin(), Order.end(),
                   [&](FileID A, FileID B) { return Depth[A] > Depth[B]; });
  for (FileID H : Order) {
    SourceLocation Inc = SM.getIncludeLoc(H);
    FileID Parent = SM.getFileID(Inc);
    if (Inc.isInvalid() || Parent.isInvalid()) {
      fail(SM.getLocForStartOfFile(H),
           "a THREADED prototype is in a file that is not #included",
           "declare it in the .tc file or in a header it includes");
      continue;
    }
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    RW.getEditBuffer(H).write(OS);
    OS.flush();
    // `#pragma once` in what becomes the main file draws a warning.
    std::string Body;
    for (llvm::StringRef Rest = Text; !Rest.empty();) {
      auto [Line, Tail] = Rest.split('\n');
      std::string Tok;
      for (char C : Line)
        if (!isspace((unsigned char)C))
          Tok += C;
      Body += (Tok == "#pragmaonce" ? "" : Line.str()) + "\n";
      Rest = Tail;
    }
    PresumedLoc Start = SM.getPresumedLoc(SM.getLocForStartOfFile(H));
    PresumedLoc At = SM.getPresumedLoc(Inc);
    llvm::StringRef Buf = SM.getBufferData(Parent);
    unsigned Off = SM.getFileOffset(Inc);
    size_t B = Buf.rfind('\n', Off), E = Buf.find('\n', Off);
    B = B == llvm::StringRef::npos ? 0 : B + 1;
    E = E == llvm::StringRef::npos ? Buf.size() : E;
    RW.ReplaceText(SM.getLocForStartOfFile(Parent).getLocWithOffset(B), E - B,
                   "#line 1 " + quoted(Start.getFilename()) + "\n" + Body +
                       "#line " + std::to_string(At.getLine() + 1) + " " +
                       quoted(At.getFilename()));
  }
}

bool Emitter::result(std::string &Out) {
  inlineHeaders();
  if (!Ok)
    return false;
  FileID Main = SM.getMainFileID();
  std::string Name = SM.getFileEntryForID(Main)
                         ? SM.getFileEntryForID(Main)->getName().str()
                         : "input";
  // A source with inserted acquires (insertedSource) starts with a #line
  // naming the .tc file it was made from: named instead of the temporary.
  bool Inserted = SM.getBufferData(Main).startswith("#line 1 \"");
  if (Inserted)
    Name = SM.getPresumedLoc(SM.getLocForEndOfFile(Main)).getFilename();
  Out = "/* Generated by earthcc (earth_tc plugin) from " + Name +
        "; do not edit. */\n";
  Out += O.SaveAll ? "/* mode: --save-all */\n" : "/* mode: minimal sets */\n";
  Out += "#include <threadedc.h>\n";
  if (O.SaveAll)
    Out += "#if defined(__clang__)\n"
           "#pragma clang diagnostic ignored \"-Wuninitialized\"\n"
           "#pragma clang diagnostic ignored \"-Wsometimes-uninitialized\"\n"
           "#elif defined(__GNUC__)\n"
           "#pragma GCC diagnostic ignored \"-Wuninitialized\"\n"
           "#pragma GCC diagnostic ignored \"-Wmaybe-uninitialized\"\n"
           "#endif\n";
  if (!Inserted)
    Out += lineDirective(SM.getLocForStartOfFile(Main)).substr(1);
  llvm::raw_string_ostream OS(Out);
  RW.getEditBuffer(Main).write(OS);
  OS.flush();
  return true;
}

} // namespace

bool emit(CompilerInstance &CI, std::vector<ThreadedFn> &Fns,
          const std::vector<const FunctionDecl *> &Protos, const Options &O,
          std::string &Out) {
  Emitter E(CI, O);
  for (const FunctionDecl *FD : Protos)
    E.prototype(FD);
  for (ThreadedFn &F : Fns)
    E.function(F);
  if (!E.result(Out))
    return false;
  Out += sourceTable(CI, Fns);
  return true;
}

} // namespace earthtc
