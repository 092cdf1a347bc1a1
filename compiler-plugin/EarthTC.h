//===- EarthTC.h - shared model of a threaded function ----------*- C++ -*-===//
//
// The earth_tc plugin reads Threaded-C (parse mode of threadedc.h), splits
// each THREADED function into fibers, computes by liveness the variables
// each fiber boundary must save and restore, and writes C against earth.h.
// This header is the model the analysis fills and the emitter reads.
//
//===----------------------------------------------------------------------===//
#ifndef EARTH_TC_H
#define EARTH_TC_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Frontend/CompilerInstance.h"
#include <map>
#include <set>
#include <string>
#include <vector>

namespace earthtc {

struct Options {
  bool SaveAll = false;              // baseline: every local at every boundary
  bool Poison = false;               // poison locals not restored (checker)
  std::string EmitPath;              // generated C
  std::string StatsPath;             // per-boundary sets, text ("-" = stdout)
  std::string JsonPath;              // the same as JSON
  std::set<std::string> DropRestore; // test hooks: remove a variable
  std::set<std::string> DropSave;
  std::string InsertPath; // earthcc: the source with inserted acquires
};

enum class MarkerKind {
  InitSync,
  Spawn,
  EndThread,
  EndFunction,
  Invoke,
  Token,
  SlotIndex
};

struct Marker {
  MarkerKind Kind;
  const clang::CallExpr *Call;
  unsigned Fiber = 0;    // fiber (region) the call is in
  std::string FiberName; // INIT_SYNC/SPAWN: the fiber named
  int Target = -1;       // its index, -1 if unknown
};

struct Fiber {
  std::string Name; // "0" for the entry fiber
  const clang::LabelStmt *Label = nullptr;
  unsigned Offset = 0; // file offset of the label
  std::vector<const clang::VarDecl *> Restore;
  std::vector<const clang::VarDecl *> InScope; // poison candidates
};

struct EndSite {
  const clang::CallExpr *Call;
  bool EndFunction;
  unsigned Fiber;
  std::vector<const clang::VarDecl *> Save;
};

struct ThreadedFn {
  const clang::FunctionDecl *FD = nullptr;
  std::string Name;  // source name
  std::string TFunc; // earth_tfunc variable (tc_main for main)
  bool IsMain = false;
  std::vector<Fiber> Fibers; // [0] = entry
  std::vector<EndSite> Sites;
  std::vector<Marker> Markers;
  std::vector<const clang::VarDecl *> Locals; // params, then body vars
  std::set<const clang::VarDecl *> FrameResident;
  std::set<const clang::VarDecl *> TopLevel; // declared at body top level
  std::map<const clang::VarDecl *, std::string> Field; // frame field names
  // Nested locals that hide a variable saved in their scope: their names in
  // the output (tc_<name>_<k>).
  std::map<const clang::VarDecl *, std::string> Renamed;
  const clang::VarDecl *Slots = nullptr; // SYNC_SLOTS
  uint64_t NumSlots = 0;
  unsigned Naive = 0; // variables moved by --save-all, summed over sites
  bool Failed = false;
  // Acquires and releases the plugin inserts around loops over SHARED
  // data (Shared.cpp): text before each location, and slots they need.
  std::vector<std::pair<clang::SourceLocation, std::string>> Inserts;
  unsigned InsertSlots = 0;
};

// Diagnostics: "file:line:col: error: <what>; fix: <hint>".
void error(clang::ASTContext &Ctx, clang::SourceLocation Loc,
           const std::string &What, const std::string &Fix);

bool isThreaded(const clang::FunctionDecl *FD);
bool isGlobalPtrType(clang::ASTContext &Ctx, clang::QualType T);
// Shared.cpp: SHARED pointers (docs/threaded-c.md, "Shared memory").
bool isSharedPtrType(clang::ASTContext &Ctx, clang::QualType T);
bool hasSharedType(clang::ASTContext &Ctx, const clang::Expr *E);
// The SHARED pointer an address expression is computed from (p in p + 1,
// &p[i], (T *)p, c ? p : q), or null.
const clang::Expr *sharedOperand(clang::ASTContext &Ctx, const clang::Expr *E);
std::string sharedName(const clang::Expr *S);
// Name as a C string literal (quotes and backslashes escaped): #line.
std::string quoted(llvm::StringRef Name);
// Every access through a SHARED pointer covered by an acquire the fiber
// chain holds (per threaded function); none in C functions (whole file).
// With MayInsert, a loop whose range is known and that no acquire covers
// gets its acquire and release (F.Inserts) instead of an error.
void checkShared(clang::CompilerInstance &CI, ThreadedFn &F, bool MayInsert);
// The main file with every function's F.Inserts applied, for a second
// translation.
std::string insertedSource(clang::CompilerInstance &CI,
                           const std::vector<ThreadedFn> &Fns);
void checkSharedInC(clang::ASTContext &Ctx);
// Does the main file use shared memory (then main runs under
// earth_dsm_main)?
bool fileUsesShared(clang::ASTContext &Ctx);
unsigned fileOffset(const clang::SourceManager &SM, clang::SourceLocation L);

// Analyze.cpp: fibers, markers, frame-resident set, liveness, save/restore.
bool analyze(clang::CompilerInstance &CI, ThreadedFn &F, const Options &O);
// Check.cpp: misuse diagnostics that need no CFG.
void check(clang::CompilerInstance &CI, ThreadedFn &F);
// Check.cpp: GLOBAL written before the '*' of a declaration (whole file).
void checkGlobalPlacement(clang::ASTContext &Ctx);
// Order.cpp: a THREADED function called as C, TO_GLOBAL of a C function's
// local (whole file); a GET destination read in the issuing fiber, a loop
// spinning on a volatile nothing in it writes (per threaded function).
void checkFileUses(clang::ASTContext &Ctx);
void checkFiberOrder(clang::CompilerInstance &CI, ThreadedFn &F);
// Emit.cpp: the generated C for the whole main file.
bool emit(clang::CompilerInstance &CI, std::vector<ThreadedFn> &Fns,
          const std::vector<const clang::FunctionDecl *> &Protos,
          const Options &O, std::string &Out);
// Sites.cpp: the source table (struct earth_src_row rows) for the end of
// the generated C; empty when there is no threaded function.
std::string sourceTable(clang::CompilerInstance &CI,
                        const std::vector<ThreadedFn> &Fns);
// The generated C function of fiber K.
inline std::string fiberFnName(const ThreadedFn &F, unsigned K) {
  return "tc_fiber_" + F.Name + "_" + F.Fibers[K].Name;
}
// Report.cpp: per-boundary sets as text and JSON.
std::string reportText(clang::ASTContext &Ctx,
                       const std::vector<ThreadedFn> &Fns);
std::string reportJson(clang::ASTContext &Ctx,
                       const std::vector<ThreadedFn> &Fns);

} // namespace earthtc

#endif
