//===- Check.cpp - fibers, markers and misuse diagnostics -----------------===//
//
// Finds the fibers (top-level labels named THREAD_<n> or named by
// INIT_SYNC/SPAWN) and the marker calls of a threaded function, and reports
// misuse that needs no control-flow graph: unknown fibers, fiber labels
// that nothing names, slot indices out of range, dereference of GLOBAL pointers
// (also behind casts) and GLOBAL pointers turned into local ones, INVOKE/TOKEN
// argument mismatches, VLAs, alloca, return statements, fiber labels inside
// blocks.
//
//===----------------------------------------------------------------------===//
#include "EarthTC.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Type.h"
#include "clang/Lex/Lexer.h"
#include "clang/Sema/Sema.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace clang;

namespace earthtc {

bool isGlobalPtrType(ASTContext &Ctx, QualType T) {
  while (!T.isNull()) {
    const Type *Ty = T.getTypePtr();
    if (const auto *MQ = dyn_cast<MacroQualifiedType>(Ty)) {
      if (MQ->getMacroIdentifier()->getName() == "GLOBAL")
        return true;
      if (MQ->getMacroIdentifier()->getName() == "SHARED")
        return false;
    }
    if (const auto *AT = dyn_cast<AttributedType>(Ty))
      if (AT->getAttrKind() == attr::BTFTypeTag) {
        // SHARED is two tags (threadedc.h): not GLOBAL.
        const auto *In =
            dyn_cast<AttributedType>(AT->getModifiedType().getTypePtr());
        return !(In && In->getAttrKind() == attr::BTFTypeTag);
      }
    QualType Next = T.getSingleStepDesugaredType(Ctx);
    if (Next == T)
      break;
    T = Next;
  }
  return false;
}

namespace {

bool isFiberNumberName(llvm::StringRef N) {
  return N.consume_front("THREAD_") && !N.empty() &&
         llvm::all_of(N, llvm::isDigit);
}

std::string normalizeFiber(llvm::StringRef N) {
  if (!N.empty() && llvm::all_of(N, llvm::isDigit))
    return ("THREAD_" + N).str();
  return N.str();
}

// The construct a parse-mode marker call stands for (threadedc.h).
llvm::Optional<MarkerKind> markerKind(llvm::StringRef N) {
  return llvm::StringSwitch<llvm::Optional<MarkerKind>>(N)
      .Case("__tc_init_sync", MarkerKind::InitSync)
      .Case("__tc_spawn", MarkerKind::Spawn)
      .Case("__tc_end_thread", MarkerKind::EndThread)
      .Case("__tc_end_function", MarkerKind::EndFunction)
      .Case("__tc_invoke", MarkerKind::Invoke)
      .Case("__tc_token", MarkerKind::Token)
      .Case("__tc_slot_index", MarkerKind::SlotIndex)
      .Default(llvm::None);
}

bool hasGlobalType(ASTContext &Ctx, const Expr *E) {
  return isGlobalPtrType(Ctx, E->getType()) ||
         isGlobalPtrType(Ctx, E->IgnoreParenImpCasts()->getType());
}

// The GLOBAL pointer an address expression is computed from, e.g. `p` in
// `*(p + 1)`, `*(int *)p`, `((struct s *)p)->f`, `*(c ? p : q)`; null if
// none. The explicit casts passed on the way go to Casts.
const Expr *globalOperand(ASTContext &Ctx, const Expr *E,
                          std::vector<const Expr *> &Casts) {
  E = E->IgnoreParens();
  if (hasGlobalType(Ctx, E))
    return E;
  if (const auto *C = dyn_cast<CastExpr>(E)) {
    if (isa<ExplicitCastExpr>(C))
      Casts.push_back(C);
    return globalOperand(Ctx, C->getSubExpr(), Casts);
  }
  if (const auto *B = dyn_cast<BinaryOperator>(E)) {
    if (B->isAdditiveOp())
      return globalOperand(
          Ctx,
          B->getLHS()->getType()->isPointerType() ? B->getLHS() : B->getRHS(),
          Casts);
    if (B->getOpcode() == BO_Comma)
      return globalOperand(Ctx, B->getRHS(), Casts);
  }
  if (const auto *C = dyn_cast<AbstractConditionalOperator>(E)) {
    if (const Expr *G = globalOperand(Ctx, C->getTrueExpr(), Casts))
      return G;
    return globalOperand(Ctx, C->getFalseExpr(), Casts);
  }
  return nullptr;
}

std::string globalName(const Expr *G) {
  if (const auto *DR = dyn_cast<DeclRefExpr>(G->IgnoreParenImpCasts()))
    return "GLOBAL pointer '" + DR->getDecl()->getNameAsString() + "'";
  return "a GLOBAL pointer";
}

// The source text of E as the user wrote it (macro arguments included).
std::string sourceText(ASTContext &Ctx, const Expr *E) {
  const SourceManager &SM = Ctx.getSourceManager();
  CharSourceRange R = CharSourceRange::getTokenRange(
      SM.getFileLoc(E->getBeginLoc()), SM.getFileLoc(E->getEndLoc()));
  return Lexer::getSourceText(R, SM, Ctx.getLangOpts()).str();
}

// The Threaded-C suffix that moves a value of type T ('\0': none).
char suffixFor(ASTContext &Ctx, QualType T) {
  T = T.getCanonicalType();
  if (T->isPointerType())
    return 'G';
  if (T->isSpecificBuiltinType(BuiltinType::Float))
    return 'F';
  if (T->isSpecificBuiltinType(BuiltinType::Double))
    return 'D';
  if (T->isIntegerType() && !T->isBooleanType()) {
    switch (Ctx.getTypeSize(T)) {
    case 8:
      return 'C';
    case 16:
      return 'S';
    case 32:
      return 'I';
    case 64:
      return 'L';
    }
  }
  return 0;
}

const char *suffixWhat(char Sfx) {
  switch (Sfx) {
  case 'C':
    return "1-byte integers (char)";
  case 'S':
    return "2-byte integers (short)";
  case 'I':
    return "4-byte integers (int)";
  case 'L':
    return "8-byte integers (long)";
  case 'F':
    return "floats";
  case 'D':
    return "doubles";
  default:
    return "GLOBAL pointers";
  }
}

class Visitor : public RecursiveASTVisitor<Visitor> {
  ASTContext &Ctx;
  ThreadedFn &F;

public:
  Visitor(CompilerInstance &CI, ThreadedFn &F)
      : Ctx(CI.getASTContext()), F(F) {}

  void fail(SourceLocation L, const std::string &What, const std::string &Fix) {
    error(Ctx, L, What, Fix);
    F.Failed = true;
  }

  // Code that threadedc.h's macros write (they pass GLOBAL pointers to the
  // runtime as plain ones).
  bool inLanguageHeader(SourceLocation L) {
    const SourceManager &SM = Ctx.getSourceManager();
    return SM.getFilename(SM.getSpellingLoc(L)).endswith("threadedc.h") ||
           SM.getFilename(SM.getExpansionLoc(L)).endswith("threadedc.h");
  }

  void checkDeref(const Expr *Base, SourceLocation L, const char *How) {
    std::vector<const Expr *> Casts;
    const Expr *G = globalOperand(Ctx, Base, Casts);
    if (!G)
      return;
    Reported.insert(Casts.begin(), Casts.end());
    fail(L, std::string(How) + " " + globalName(G) + " directly",
         "a GLOBAL pointer may name another node's memory (a cast does not "
         "change that): read it with GET_SYNC_x(ptr, &local, slot) or write "
         "it with DATA_SYNC_x(value, ptr, slot) and use the value in the "
         "fiber the slot enables");
  }

  // SHARED pointers stay SHARED: none becomes a local or GLOBAL pointer,
  // and none is made from one.
  void checkSharedConversion(const Expr *From, QualType To, SourceLocation L) {
    if (!To->isPointerType() || inLanguageHeader(L))
      return;
    bool ToShared = isSharedPtrType(Ctx, To);
    const Expr *S = sharedOperand(Ctx, From);
    if (S && !ToShared &&
        !SharedReported.insert(S->getBeginLoc().getRawEncoding()).second)
      return; // a cast inside a call's argument: said once
    if (S && !ToShared) {
      if (isGlobalPtrType(Ctx, To))
        fail(L, "using " + sharedName(S) + " as a GLOBAL pointer",
             "a SHARED pointer names shared memory, read and written in "
             "place after ACQUIRE_R_SYNC / ACQUIRE_W_SYNC; GET_SYNC_x, "
             "DATA_SYNC_x and BLKMOV_SYNC take GLOBAL pointers: keep the two "
             "apart");
      else
        fail(L, "converting " + sharedName(S) + " to a local pointer",
             "a local pointer would escape the acquire checks: keep it "
             "SHARED ('T *SHARED q = ...') and access the memory in a "
             "fiber that an acquire of the range enabled");
      return;
    }
    if (!S && ToShared && !From->getType()->isIntegerType() &&
        !From->isNullPointerConstant(Ctx, Expr::NPC_ValueDependentIsNull)) {
      bool G = hasGlobalType(Ctx, From);
      fail(L,
           std::string("a ") + (G ? "GLOBAL" : "local") +
               " pointer where a SHARED pointer is expected",
           "SHARED pointers come from SHARED_ARRAY (or from another SHARED "
           "pointer, e.g. 'a + k'); " +
               std::string(G ? "a GLOBAL pointer names one node's memory: "
                               "move it with GET_SYNC_x / DATA_SYNC_x"
                             : "a local pointer names this node's memory "
                               "only"));
    }
  }

  // A GLOBAL pointer value turned into a local pointer (To) at L.
  void checkConversion(const Expr *From, QualType To, SourceLocation L) {
    checkSharedConversion(From, To, L);
    if (!To->isPointerType() || isGlobalPtrType(Ctx, To) ||
        isSharedPtrType(Ctx, To) || !hasGlobalType(Ctx, From) ||
        inLanguageHeader(L))
      return;
    fail(L, "converting " + globalName(From) + " to a local pointer",
         "a GLOBAL pointer may name another node's memory: keep it GLOBAL "
         "(cast to 'T *GLOBAL'), and read or write through it with "
         "GET_SYNC_x / DATA_SYNC_x / BLKMOV_SYNC");
  }

  bool VisitCStyleCastExpr(CStyleCastExpr *C) {
    if (!Reported.count(C))
      checkConversion(C->getSubExpr(), C->getType(), C->getBeginLoc());
    return true;
  }
  // Elements and members initialized by a brace list (semantic form: one
  // initializer per element, per member, or the union member chosen).
  // (The visitor walks the syntactic form only.)
  bool VisitInitListExpr(InitListExpr *Syn) {
    const InitListExpr *IL =
        Syn->isSemanticForm() ? Syn : Syn->getSemanticForm();
    if (!IL)
      return true;
    QualType T = IL->getType();
    auto check = [&](unsigned I, QualType To) {
      if (I < IL->getNumInits() && IL->getInit(I))
        checkConversion(IL->getInit(I), To, IL->getInit(I)->getBeginLoc());
    };
    if (const ArrayType *AT = Ctx.getAsArrayType(T)) {
      for (unsigned I = 0; I < IL->getNumInits(); ++I)
        check(I, AT->getElementType());
    } else if (const FieldDecl *FD = IL->getInitializedFieldInUnion()) {
      check(0, FD->getType());
    } else if (const auto *RT = T->getAs<RecordType>()) {
      unsigned I = 0;
      for (const FieldDecl *FD : RT->getDecl()->fields())
        check(I++, FD->getType());
    }
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator *B) {
    if (B->getOpcode() == BO_Assign)
      checkConversion(B->getRHS(), B->getLHS()->getType(),
                      B->getRHS()->getBeginLoc());
    return true;
  }

  bool VisitUnaryOperator(UnaryOperator *U) {
    if (U->getOpcode() == UO_Deref)
      checkDeref(U->getSubExpr(), U->getOperatorLoc(), "dereferencing");
    return true;
  }
  bool VisitArraySubscriptExpr(ArraySubscriptExpr *A) {
    checkDeref(A->getBase(), A->getExprLoc(), "indexing");
    return true;
  }
  bool VisitMemberExpr(MemberExpr *M) {
    if (M->isArrow())
      checkDeref(M->getBase(), M->getOperatorLoc(), "dereferencing (->)");
    return true;
  }
  bool VisitReturnStmt(ReturnStmt *R) {
    fail(R->getReturnLoc(), "'return' in THREADED function '" + F.Name + "'",
         "end the fiber with END_THREAD(), or the whole invocation with "
         "END_FUNCTION()");
    return true;
  }
  bool VisitVarDecl(VarDecl *V) {
    if (const Expr *I = V->getInit())
      checkConversion(I, V->getType(), I->getBeginLoc());
    if (V->getType()->isVariableArrayType())
      fail(V->getLocation(),
           "variable-length array '" + V->getNameAsString() +
               "' in THREADED function '" + F.Name + "'",
           "locals live in the heap frame, whose size is fixed: give the "
           "array a constant size, or malloc it and free it before "
           "END_FUNCTION()");
    if (V->hasLocalStorage() && !isa<ParmVarDecl>(V))
      if (V->getName() == "SYNC_SLOTS") {
        F.Slots = V;
        if (const auto *CA = Ctx.getAsConstantArrayType(V->getType()))
          F.NumSlots = CA->getSize().getZExtValue();
      }
    return true;
  }
  void nestedFiberLabel(const LabelStmt *L) {
    fail(L->getIdentLoc(),
         "fiber label '" + std::string(L->getName()) +
             "' is not at the top level of THREADED function '" + F.Name + "'",
         "move the label out of the enclosing block, loop or switch; a loop "
         "across fibers is written as a fiber that re-enables itself with a "
         "slot whose reset count is non-zero");
  }
  bool VisitLabelStmt(LabelStmt *L) {
    if (TopLabels.count(L))
      return true;
    Nested.emplace(std::string(L->getName()), L);
    if (isFiberNumberName(L->getName()))
      nestedFiberLabel(L);
    return true;
  }
  // The operand the user wrote in a split-phase macro, under what
  // threadedc.h adds (tc_gptr_x(...) and its casts).
  const Expr *userOperand(const Expr *E) {
    for (;;) {
      E = E->IgnoreParenImpCasts();
      if (const auto *C = dyn_cast<CallExpr>(E))
        if (const FunctionDecl *FD = C->getDirectCallee())
          if (FD->getName().startswith("tc_gptr") && C->getNumArgs() == 1) {
            E = C->getArg(0);
            continue;
          }
      if (const auto *C = dyn_cast<ExplicitCastExpr>(E))
        if (inLanguageHeader(C->getBeginLoc()) &&
            !isGlobalPtrType(Ctx, C->getType())) {
          E = C->getSubExpr();
          continue;
        }
      return E;
    }
  }

  // The pointee of operand E must be what suffix Sfx moves.
  void checkWidth(const std::string &Macro, char Sfx, const Expr *E,
                  const char *Role) {
    QualType T = E->getType();
    if (!T->isPointerType() || T->getPointeeType()->isVoidType())
      return;
    QualType PT = T->getPointeeType();
    char Have = suffixFor(Ctx, PT);
    if (Have == Sfx)
      return;
    std::string PS = PT.getAsString();
    std::string Size =
        PT->isIncompleteType()
            ? ""
            : " (" + std::to_string(Ctx.getTypeSizeInChars(PT).getQuantity()) +
                  " bytes)";
    std::string Fix =
        Have ? "use the suffix for '" + PS +
                   "': " + Macro.substr(0, Macro.size() - 1) + Have +
                   " (suffixes: _C char, _S short, _I int, _L long, _F "
                   "float, _D double, _G a GLOBAL pointer)"
             : "move '" + PS + "' with BLKMOV_SYNC(src, dst, sizeof(" + PS +
                   "), slot)";
    fail(E->getBeginLoc(),
         Macro + " moves " + suffixWhat(Sfx) + ", but its " + Role + " '" +
             sourceText(Ctx, E) + "' points to '" + PS + "'" + Size,
         Fix);
  }

  // GET_SYNC_x / GET_RSYNC_x / DATA_SYNC_x / DATA_RSYNC_x / BLKMOV_SYNC /
  // BLKMOV_RSYNC as threadedc.h expands them (the runtime call spelled in
  // the header): direction of each pointer and width against the suffix.
  // Returns false for any other call.
  bool checkSplitPhase(const CallExpr *C, llvm::StringRef N) {
    if (!C->getBeginLoc().isMacroID() || !inLanguageHeader(C->getRParenLoc()) ||
        !N.consume_front("earth_") || C->getNumArgs() < 2)
      return false;
    llvm::StringRef Rest = N;
    enum { Get, Data, Blk } Op;
    if (Rest.consume_front("get_"))
      Op = Get;
    else if (Rest.consume_front("data_"))
      Op = Data;
    else if (Rest.consume_front("blkmov_"))
      Op = Blk;
    else
      return false;
    if (!Rest.consume_front("sync") && !Rest.consume_front("rsync"))
      return false;
    char Sfx = 0;
    if (Op != Blk) {
      if (!Rest.consume_front("_") || Rest.size() != 1)
        return false;
      Sfx = llvm::toUpper(Rest[0]);
    } else if (!Rest.empty()) {
      return false;
    }
    std::string Macro = N.upper();
    const Expr *A0 = userOperand(C->getArg(0)), *A1 = userOperand(C->getArg(1));
    for (const Expr *A : {A0, A1})
      if (const Expr *S = sharedOperand(Ctx, A)) {
        fail(A->getBeginLoc(),
             Macro + " is given " + sharedName(S) +
                 ", but it moves data through GLOBAL pointers",
             "SHARED memory is read and written in place: acquire the range "
             "with ACQUIRE_R_SYNC / ACQUIRE_W_SYNC(p, count, slot) and use "
             "p[i] in the fiber the slot enables");
        return true;
      }
    bool G0 = hasGlobalType(Ctx, A0), G1 = hasGlobalType(Ctx, A1);
    std::string T0 = sourceText(Ctx, A0), T1 = sourceText(Ctx, A1);
    const char *Where = " (T *GLOBAL, TO_GLOBAL(&x) for this node's memory, "
                        "GLOBAL_AT(node, addr) for another node's)";
    bool Ok = true;
    auto bad = [&](const Expr *E, const std::string &What,
                   const std::string &Fix) {
      fail(E->getBeginLoc(), What, Fix);
      Ok = false;
    };
    if (Op == Get) {
      if (!G0 && G1)
        bad(A0,
            Macro + " reads its first argument and writes its second, but '" +
                T0 + "' is a local pointer and '" + T1 + "' is GLOBAL",
            "the order is " + Macro +
                "(global source, local destination, ...), not memcpy's: "
                "write " +
                Macro + "(" + T1 + ", " + T0 + ", ...)");
      else if (!G0)
        bad(A0,
            "the source of " + Macro + ", '" + T0 +
                "', is a local pointer, not GLOBAL",
            "pass a GLOBAL pointer" + std::string(Where) + ": " + Macro +
                "(global source, local destination, ...)");
      else if (G1)
        bad(A1,
            "the destination of " + Macro + ", '" + T1 +
                "', is GLOBAL, not a local pointer",
            Macro + " writes a variable of this fiber: pass &local; to copy "
                    "from one GLOBAL pointer to another use BLKMOV_SYNC");
    } else if (Op == Data) {
      if (!G1)
        bad(A1,
            "the destination of " + Macro + ", '" + T1 +
                "', is a local pointer, not GLOBAL",
            "pass a GLOBAL pointer" + std::string(Where) + ": " + Macro +
                "(value, global destination, ...)");
    } else {
      if (!G0)
        bad(A0,
            "the source of " + Macro + ", '" + T0 +
                "', is a local pointer, not GLOBAL",
            "pass a GLOBAL pointer" + std::string(Where) + ": " + Macro +
                "(global source, global destination, bytes, ...)");
      if (!G1)
        bad(A1,
            "the destination of " + Macro + ", '" + T1 +
                "', is a local pointer, not GLOBAL",
            "pass a GLOBAL pointer" + std::string(Where) + ": " + Macro +
                "(global source, global destination, bytes, ...)");
    }
    if (Ok && Op == Get) {
      checkWidth(Macro, Sfx, A0, "source");
      checkWidth(Macro, Sfx, A1, "destination");
    } else if (Ok && Op == Data) {
      checkWidth(Macro, Sfx, A1, "destination");
    }
    return true;
  }

  bool VisitCallExpr(CallExpr *C) {
    const FunctionDecl *Callee = C->getDirectCallee();
    if (!Callee)
      return true;
    llvm::StringRef N = Callee->getName();
    if (checkSplitPhase(C, N))
      return true;
    if ((N == "tc_to_global" || N == "tc_global_at") && C->getNumArgs())
      if (const Expr *S = sharedOperand(Ctx, C->getArg(C->getNumArgs() - 1))) {
        fail(C->getArg(C->getNumArgs() - 1)->getBeginLoc(),
             std::string(N == "tc_to_global" ? "TO_GLOBAL" : "GLOBAL_AT") +
                 " of " + sharedName(S),
             "shared memory has one address on every node and is not "
             "reached through GLOBAL pointers: pass the SHARED pointer "
             "itself (a 'T *SHARED' parameter) and acquire the range there");
        return true;
      }
    if (!inLanguageHeader(Callee->getLocation()) &&
        !inLanguageHeader(C->getBeginLoc())) // tc_gptr_x: by design
      for (unsigned I = 0; I < C->getNumArgs() && I < Callee->getNumParams();
           ++I)
        checkConversion(C->getArg(I), Callee->getParamDecl(I)->getType(),
                        C->getArg(I)->getBeginLoc());
    if (N == "alloca" || N == "__builtin_alloca") {
      fail(C->getBeginLoc(), "alloca in THREADED function '" + F.Name + "'",
           "the C stack is gone when the fiber ends: use a fixed-size local "
           "array (it lives in the frame) or malloc");
      return true;
    }
    llvm::Optional<MarkerKind> Kind = markerKind(N);
    if (!Kind)
      return true;
    MarkerKind K = *Kind;
    Marker M;
    M.Kind = K;
    M.Call = C;
    if (K == MarkerKind::InitSync || K == MarkerKind::Spawn) {
      const Expr *A = C->getArg(K == MarkerKind::InitSync ? 3 : 0);
      if (const auto *S = dyn_cast<StringLiteral>(A->IgnoreParenImpCasts()))
        M.FiberName = normalizeFiber(S->getString());
    }
    F.Markers.push_back(M);
    return true;
  }

  std::set<const LabelStmt *> TopLabels;
  std::map<std::string, const LabelStmt *> Nested; // labels inside blocks
  std::set<const Expr *> Reported;   // casts a dereference error named
  std::set<unsigned> SharedReported; // SHARED operands a conversion named
};

std::string paramList(const FunctionDecl *FD) {
  std::string S;
  for (const ParmVarDecl *P : FD->parameters()) {
    if (!S.empty())
      S += ", ";
    S += P->getType().getAsString() + " " + P->getNameAsString();
  }
  return S.empty() ? "no arguments" : S;
}

// The THREADED function E names (main included), or null.
const FunctionDecl *threadedNamed(const Expr *E) {
  const auto *DR = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
  const auto *T = DR ? dyn_cast<FunctionDecl>(DR->getDecl()) : nullptr;
  return T && isThreaded(T) ? T : nullptr;
}

void checkCall(CompilerInstance &CI, ThreadedFn &F, const Marker &M) {
  ASTContext &Ctx = CI.getASTContext();
  const char *Op = M.Kind == MarkerKind::Invoke ? "INVOKE" : "TOKEN";
  const CallExpr *C = M.Call;
  const Expr *Callee = C->getArg(1)->IgnoreParenImpCasts();
  const FunctionDecl *T = threadedNamed(Callee);
  const FunctionDecl *First = threadedNamed(C->getArg(0));
  if (M.Kind == MarkerKind::Invoke && !T && First) {
    error(Ctx, C->getArg(0)->IgnoreParenImpCasts()->getBeginLoc(),
          "INVOKE takes the node first, then the THREADED function: '" +
              First->getNameAsString() + "' is where the node belongs",
          "write INVOKE(node, " + First->getNameAsString() +
              ", arguments...), e.g. INVOKE(NODE_ID, " +
              First->getNameAsString() + ", ...)");
    F.Failed = true;
    return;
  }
  if (!T || T->getName() == "main") {
    error(Ctx, Callee->getBeginLoc(),
          std::string(Op) + " names something that is not a THREADED function",
          "declare the callee as 'THREADED name(params)' before this use "
          "(main cannot be invoked)");
    F.Failed = true;
    return;
  }
  unsigned Given = C->getNumArgs() - 2, Want = T->getNumParams();
  std::string Sig = T->getNameAsString() + "(" + paramList(T) + ")";
  if (Given != Want) {
    error(Ctx, C->getBeginLoc(),
          std::string(Op) + " passes " + std::to_string(Given) +
              " argument(s) to '" + T->getNameAsString() + "', which takes " +
              std::to_string(Want),
          "pass exactly the arguments of THREADED " + Sig);
    F.Failed = true;
    return;
  }
  Sema &S = CI.getSema();
  // INVOKE(NODE_ID, ...) stays on this node; any other INVOKE, and TOKEN,
  // may run the callee on another node.
  bool Remote = true;
  if (M.Kind == MarkerKind::Invoke) {
    const Expr *Node = C->getArg(0)->IgnoreParenCasts();
    if (const auto *NC = dyn_cast<CallExpr>(Node))
      if (const FunctionDecl *NF = NC->getDirectCallee())
        Remote = NF->getName() != "earth_node_id";
  }
  for (unsigned I = 0; I < Want; ++I) {
    const Expr *A = C->getArg(I + 2)->IgnoreImpCasts();
    const ParmVarDecl *P = T->getParamDecl(I);
    QualType AT = A->getType();
    if (AT->isArrayType())
      AT = Ctx.getArrayDecayedType(AT);
    else if (AT->isFunctionType())
      AT = Ctx.getPointerType(AT);
    QualType PT = P->getType().getUnqualifiedType();
    bool Null = PT->isPointerType() &&
                A->isNullPointerConstant(Ctx, Expr::NPC_ValueDependentIsNull);
    bool Ok = Null || S.CheckAssignmentConstraints(A->getBeginLoc(), PT,
                                                   AT.getUnqualifiedType()) ==
                          Sema::Compatible;
    std::string Where = "argument " + std::to_string(I + 1) + " of " + Op +
                        "(" + T->getNameAsString() + ", ...)";
    if (!Ok) {
      error(Ctx, A->getBeginLoc(),
            Where + " has type '" + A->getType().getAsString() +
                "', but parameter '" + P->getNameAsString() + "' has type '" +
                P->getType().getAsString() + "'",
            "pass a value of the parameter's type (THREADED " + Sig + ")");
      F.Failed = true;
    } else if (!Null && PT->isPointerType() &&
               (isSharedPtrType(Ctx, P->getType()) || sharedOperand(Ctx, A))) {
      bool WantShared = isSharedPtrType(Ctx, P->getType());
      if (!WantShared || !sharedOperand(Ctx, A)) {
        error(Ctx, A->getBeginLoc(),
              Where +
                  (WantShared ? " is not a SHARED pointer, but parameter '"
                              : " is a SHARED pointer, but parameter '") +
                  P->getNameAsString() + "' is " +
                  (WantShared                           ? "SHARED"
                   : isGlobalPtrType(Ctx, P->getType()) ? "GLOBAL"
                                                        : "a local pointer"),
              WantShared ? "pass a SHARED pointer (SHARED_ARRAY, or one "
                           "derived from it)"
                         : "declare the parameter SHARED, after the '*': '" +
                               PT->getPointeeType().getAsString() +
                               " *SHARED " + P->getNameAsString() + "'");
        F.Failed = true;
      }
    } else if (!Null && PT->isPointerType() &&
               isGlobalPtrType(Ctx, P->getType()) !=
                   isGlobalPtrType(Ctx, A->getType())) {
      bool WantGlobal = isGlobalPtrType(Ctx, P->getType());
      error(Ctx, A->getBeginLoc(),
            Where +
                (WantGlobal ? " is a local pointer, but parameter '"
                            : " is a GLOBAL pointer, but parameter '") +
                P->getNameAsString() + "' is " +
                (WantGlobal ? "GLOBAL" : "a local pointer"),
            WantGlobal ? "wrap the address with TO_GLOBAL(&x): the callee "
                         "may run on another node"
                       : "declare the parameter GLOBAL, after the '*': '" +
                             PT->getPointeeType().getAsString() + " *GLOBAL " +
                             P->getNameAsString() + "'");
      F.Failed = true;
    } else if (!Null && Remote && PT->isPointerType() &&
               !PT->isFunctionPointerType() &&
               !isGlobalPtrType(Ctx, P->getType())) {
      error(Ctx, A->getBeginLoc(),
            Where + " is a local pointer ('" + A->getType().getAsString() +
                "'), and '" + T->getNameAsString() +
                "' may run on another node, where that address means nothing",
            "declare parameter '" + P->getNameAsString() + "' as '" +
                PT->getPointeeType().getAsString() + " *GLOBAL " +
                P->getNameAsString() +
                "', pass TO_GLOBAL(...) and use GET_SYNC_x / DATA_SYNC_x / "
                "BLKMOV_SYNC through it; or pass the value; or "
                "INVOKE(NODE_ID, ...) to stay on this node");
      F.Failed = true;
    }
  }
}

// GLOBAL on a type that is not a pointer: `long GLOBAL *p` (GLOBAL before
// the '*') would be a local pointer to a "global long".
class PlacementVisitor : public RecursiveASTVisitor<PlacementVisitor> {
  ASTContext &Ctx;

  // The type under GLOBAL's tag.
  QualType untagged(QualType T) {
    for (;;) {
      const Type *Ty = T.getTypePtr();
      if (const auto *MQ = dyn_cast<MacroQualifiedType>(Ty))
        T = MQ->getModifiedType();
      else if (const auto *AT = dyn_cast<AttributedType>(Ty))
        T = AT->getModifiedType();
      else
        return T;
    }
  }

public:
  explicit PlacementVisitor(ASTContext &Ctx) : Ctx(Ctx) {}
  bool VisitDeclaratorDecl(DeclaratorDecl *D) {
    const SourceManager &SM = Ctx.getSourceManager();
    SourceLocation L = SM.getFileLoc(D->getLocation());
    if (L.isInvalid() || SM.isInSystemHeader(L) ||
        SM.getFilename(L).endswith("threadedc.h"))
      return true;
    QualType T = D->getType();
    std::string Stars;
    for (;;) {
      if (isGlobalPtrType(Ctx, T) && !T->isPointerType()) {
        std::string Name = D->getNameAsString();
        std::string Want = untagged(T).getAsString() + " *GLOBAL " +
                           (Stars.size() > 1 ? Stars.substr(1) : "") + Name;
        if (Stars.empty())
          error(Ctx, D->getLocation(),
                "GLOBAL on '" + Name + "', which is not a pointer",
                "only a pointer can be GLOBAL: write '" + Want + "'");
        else
          error(Ctx, D->getLocation(),
                "GLOBAL before the '*' in the declaration of '" + Name +
                    "' qualifies the pointed-to type, so '" + Name +
                    "' is a local pointer",
                "write '" + Want +
                    "' (GLOBAL goes after the '*' of the pointer it makes "
                    "global, as const does)");
        return true;
      }
      if (const auto *PT = T->getAs<PointerType>()) {
        T = PT->getPointeeType();
        Stars += "*";
      } else if (const ArrayType *AT = Ctx.getAsArrayType(T)) {
        T = AT->getElementType();
      } else {
        return true;
      }
    }
  }
};

// A fiber runs only when INIT_SYNC attaches a slot to it or SPAWN names
// it: a fiber label that none names can never run. The code is still well
// formed (F.Failed stays clear, so the CFG checks of analyze run too).
// Not reported while a marker names an unknown fiber (its typo is the
// error).
void checkFibersNamed(ASTContext &Ctx, const ThreadedFn &F) {
  std::vector<bool> Named(F.Fibers.size(), false);
  for (const Marker &M : F.Markers) {
    if (M.Kind != MarkerKind::InitSync && M.Kind != MarkerKind::Spawn)
      continue;
    if (M.Target < 0)
      return;
    Named[M.Target] = true;
  }
  for (size_t I = 1; I < F.Fibers.size(); ++I)
    if (!Named[I])
      error(Ctx, F.Fibers[I].Label->getIdentLoc(),
            "fiber label '" + F.Fibers[I].Name + "' of THREADED function '" +
                F.Name +
                "' is named by no INIT_SYNC or SPAWN, so its fiber can "
                "never run",
            "attach a slot to it with INIT_SYNC(slot, count, reset, " +
                F.Fibers[I].Name + ") and signal the slot, or SPAWN(" +
                F.Fibers[I].Name + "); or remove the label and its code");
}

} // namespace

void checkGlobalPlacement(ASTContext &Ctx) {
  PlacementVisitor V(Ctx);
  V.TraverseDecl(Ctx.getTranslationUnitDecl());
}

void check(CompilerInstance &CI, ThreadedFn &F) {
  ASTContext &Ctx = CI.getASTContext();
  const SourceManager &SM = Ctx.getSourceManager();
  const auto *Body = cast<CompoundStmt>(F.FD->getBody());
  Visitor V(CI, F);
  std::vector<const LabelStmt *> Top;
  for (const Stmt *S : Body->body())
    for (const auto *L = dyn_cast<LabelStmt>(S); L;
         L = dyn_cast<LabelStmt>(L->getSubStmt())) {
      Top.push_back(L);
      V.TopLabels.insert(L);
    }
  V.TraverseStmt(const_cast<CompoundStmt *>(Body));

  if (F.IsMain) {
    auto Params = F.FD->parameters();
    bool Ok = Params.empty() ||
              (Params.size() == 2 &&
               Params[0]->getType()->isSpecificBuiltinType(BuiltinType::Int) &&
               Params[1]->getType()->isPointerType());
    if (!Ok) {
      error(
          Ctx, F.FD->getLocation(), "THREADED main has unsupported parameters",
          "write 'THREADED main()' or 'THREADED main(int argc, char **argv)'");
      F.Failed = true;
    }
  }

  // Fibers: entry, then top-level labels that are numbered or named.
  std::set<std::string> Named;
  for (const Marker &M : F.Markers)
    if (!M.FiberName.empty())
      Named.insert(M.FiberName);
  F.Fibers.push_back(Fiber{"0", nullptr, 0, {}, {}});
  for (const LabelStmt *L : Top)
    if (isFiberNumberName(L->getName()) ||
        Named.count(std::string(L->getName())))
      F.Fibers.push_back(Fiber{std::string(L->getName()),
                               L,
                               fileOffset(SM, L->getIdentLoc()),
                               {},
                               {}});

  std::set<const LabelStmt *> ReportedNested;
  std::string Known;
  for (size_t I = 1; I < F.Fibers.size(); ++I)
    Known += (Known.empty() ? "" : ", ") + F.Fibers[I].Name;
  for (Marker &M : F.Markers) {
    unsigned Off = fileOffset(SM, M.Call->getBeginLoc());
    for (size_t I = 1; I < F.Fibers.size(); ++I)
      if (F.Fibers[I].Offset <= Off)
        M.Fiber = I;
    const char *Op = M.Kind == MarkerKind::InitSync ? "INIT_SYNC" : "SPAWN";
    if (M.Kind == MarkerKind::InitSync || M.Kind == MarkerKind::Spawn) {
      for (size_t I = 1; I < F.Fibers.size(); ++I)
        if (F.Fibers[I].Name == M.FiberName)
          M.Target = I;
      if (M.FiberName == "THREAD_0") {
        error(Ctx, M.Call->getBeginLoc(),
              std::string(Op) + " names fiber 0, the entry of '" + F.Name + "'",
              "fiber 0 runs once per invocation; put the code to repeat "
              "after a label such as THREAD_1:");
        F.Failed = true;
      } else if (M.Target < 0 && V.Nested.count(M.FiberName)) {
        // A symbolic fiber label inside a block: say so, once.
        const LabelStmt *L = V.Nested[M.FiberName];
        if (!isFiberNumberName(L->getName()) && ReportedNested.insert(L).second)
          V.nestedFiberLabel(L);
      } else if (M.Target < 0) {
        std::string Suggest;
        unsigned Best = 3;
        for (const LabelStmt *L : Top) {
          unsigned D = llvm::StringRef(L->getName()).edit_distance(M.FiberName);
          if (D <= Best) {
            Best = D;
            Suggest = L->getName();
          }
        }
        error(Ctx, M.Call->getBeginLoc(),
              std::string(Op) + " names fiber '" + M.FiberName +
                  "', but THREADED function '" + F.Name +
                  "' has no such label at the top level of its body" +
                  (Known.empty() ? "" : " (its fibers: " + Known + ")"),
              Suggest.empty()
                  ? "add the label '" + M.FiberName +
                        ":' at the top level of the function, or name an "
                        "existing fiber"
                  : "did you mean '" + Suggest + "'? (or add the label '" +
                        M.FiberName + ":' at the top level of the function)");
        F.Failed = true;
      }
    }
    if (M.Kind == MarkerKind::InitSync || M.Kind == MarkerKind::SlotIndex) {
      const Expr *S = M.Call->getArg(0);
      Expr::EvalResult R;
      if (!F.Slots) {
        error(Ctx, M.Call->getBeginLoc(),
              "THREADED function '" + F.Name +
                  "' uses a sync slot but "
                  "declares no slots",
              "declare 'SLOT SYNC_SLOTS[n];' at the top of its body");
        F.Failed = true;
      } else if (S->EvaluateAsInt(R, Ctx)) {
        int64_t I = R.Val.getInt().getExtValue();
        if (I < 0 || (uint64_t)I >= F.NumSlots) {
          error(Ctx, S->getBeginLoc(),
                "slot index " + std::to_string(I) + " is out of range: '" +
                    F.Name + "' declares SYNC_SLOTS[" +
                    std::to_string(F.NumSlots) + "]",
                "use an index from 0 to " + std::to_string(F.NumSlots - 1) +
                    ", or declare more slots");
          F.Failed = true;
        }
      }
    }
    if (M.Kind == MarkerKind::Invoke || M.Kind == MarkerKind::Token)
      checkCall(CI, F, M);
  }
  checkFibersNamed(Ctx, F);
}

} // namespace earthtc
