// The gpubt language: bpftrace 0.17's syntax plus `< ... >` probe bodies and gpu:/host: probes,
// and what newer bpftrace added (issue 29): let, for, break/continue/return, true/false,
// `if`/`while` without parentheses, duration literals.
//
// Lexing depends on where we are, so the lexer keeps a little state (see @lexer::members):
//  * header    outside any probe body: attach points are single ATTACH tokens (paths, wildcards,
//              C++ names), `/` opens a predicate, `{` or `<` opens a body.
//  * predicate between the opening `/` and the `/` that is followed by `{` or `<` (ENDPRED,
//              as bpftrace's lexer does); any other `/` there is division.
//  * body      inside `{ }` or `< >`. In a `< >` body a lone `>` outside every (), [] and {}
//              ends the body (RANGLE), so write the comparison `>` inside parentheses or braces
//              there: `gpu:kprobe:k < if ($x > 1) { @big = count(); } >`, `< @b = ($x > 1); >`.
//              `<`, `>=`, `>>` and `>>=` keep their meaning everywhere in a body.
// Statements follow bpftrace's rule: separated by `;` (optional after the last one), except that
// `if` needs none; blocks of `if` always use braces.
grammar Gpubt;

@parser::members {
  bool block_end() {
    size_t la = _input->LA(1);
    return la == RBRACE || la == RANGLE;
  }
}

@lexer::members {
public:
  // Where we are. ANTLR's own rules have no predicates or actions (those would stop its DFA
  // cache and make lexing ~50x slower); nextToken() applies the state to each token instead.
  // Decl: a top-level `let @m = hash(N);`, `macro NAME(...)`, `config =` or `import "x";` up to
  // its `;` or `{`.
  enum class Where { Header, Predicate, Body, Decl };
  Where where_ = Where::Header;
  bool angle_ = false;  // the current body is `< >`
  int braces_ = 0;      // `{` open inside the current body
  int parens_ = 0;      // `(` and `[` open inside the current body

  static bool attach_start(size_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool attach_char(size_t c) {
    static const std::string extra = "_./*?+-~$@[]#%=!&|^:";
    return attach_start(c) || (c >= '0' && c <= '9') || (c < 128 && extra.find(char(c)) != std::string::npos);
  }
  // An attach point up to the next blank, `,`, `{` or `<`: provider:target:func with `/`, `.`,
  // wildcards and C++ characters, and "double quoted" parts for paths with blanks.
  std::unique_ptr<antlr4::Token> lex_attach_point() {
    size_t start = _input->index(), line = getLine(), col = getCharPositionInLine();
    while (true) {
      size_t c = _input->LA(1);
      if (c == '"') {
        size_t n = 2;
        while (_input->LA(n) != '"' && _input->LA(n) != '\n' && _input->LA(n) != '\r' &&
               _input->LA(n) != antlr4::Token::EOF)
          n += _input->LA(n) == '\\' && _input->LA(n + 1) == '"' ? 2 : 1; // \" inside
        if (_input->LA(n) != '"')
          break;
        for (size_t i = 0; i < n; ++i)
          _input->consume();
      } else if (attach_char(c)) {
        _input->consume();
      } else {
        break;
      }
    }
    size_t stop = _input->index() - 1;
    setCharPositionInLine(col + (stop + 1 - start));
    return _factory->create({this, _input}, ATTACH, "", antlr4::Token::DEFAULT_CHANNEL, start,
                            stop, line, col);
  }

  // `#!...` at the start of a line (the shebang of an executable script) is a comment, as
  // bpftrace's `^"#!".*$` rule makes it.
  std::unique_ptr<antlr4::Token> lex_shebang() {
    size_t start = _input->index(), line = getLine();
    while (_input->LA(1) != '\n' && _input->LA(1) != '\r' && _input->LA(1) != antlr4::Token::EOF)
      _input->consume();
    setCharPositionInLine(_input->index() - start);
    return _factory->create({this, _input}, LINE_COMMENT, "", antlr4::Token::HIDDEN_CHANNEL,
                            start, _input->index() - 1, line, 0);
  }

  // Outside probe bodies, `#include`/`#define` lines (with `\` continuations) and C definitions
  // (`struct|union|enum NAME { ... };`, `typedef ...;`) are single tokens for clang to read.
  std::unique_ptr<antlr4::Token> lex_preprocessor_line() {
    size_t start = _input->index(), line = getLine(), col = getCharPositionInLine();
    size_t lines = 0, last_line_start = start;
    while (_input->LA(1) != antlr4::Token::EOF) {
      size_t c = _input->LA(1);
      if (c == '\\' && _input->LA(2) == '\n') {
        _input->consume();
        _input->consume();
        ++lines;
        last_line_start = _input->index();
        continue;
      }
      if (c == '\n' || c == '\r')
        break;
      _input->consume();
    }
    return finish_c_token(CPP_LINE, start, line, col, lines, last_line_start);
  }

  bool c_definition_start() {
    static const char *const words[] = {"struct", "union", "enum", "typedef"};
    for (const char *w : words) {
      size_t n = 0;
      while (w[n] && _input->LA(n + 1) == size_t(w[n]))
        ++n;
      size_t next = _input->LA(n + 1);
      if (!w[n] && (next == ' ' || next == '\t' || next == '\n' || next == '{'))
        return true;
    }
    return false;
  }

  std::unique_ptr<antlr4::Token> lex_c_definition() {
    size_t start = _input->index(), line = getLine(), col = getCharPositionInLine();
    bool is_typedef = _input->LA(1) == 't';
    size_t lines = 0, last_line_start = start;
    int depth = 0;
    while (_input->LA(1) != antlr4::Token::EOF) {
      size_t c = _input->LA(1);
      _input->consume();
      if (c == '\n') {
        ++lines;
        last_line_start = _input->index();
      }
      if (c == '{')
        ++depth;
      if (c == ';' && depth == 0)
        break;
      if (c == '}' && --depth == 0 && !is_typedef) {
        size_t n = 1; // a `;` after the closing brace belongs to the definition
        while (_input->LA(n) == ' ' || _input->LA(n) == '\t')
          ++n;
        if (_input->LA(n) == ';')
          for (size_t i = 0; i < n; ++i)
            _input->consume();
        break;
      }
    }
    return finish_c_token(C_DEFINITION, start, line, col, lines, last_line_start);
  }

  std::unique_ptr<antlr4::Token> finish_c_token(size_t type, size_t start, size_t line, size_t col,
                                                size_t lines, size_t last_line_start) {
    setLine(line + lines);
    setCharPositionInLine(lines ? _input->index() - last_line_start : col + _input->index() - start);
    return _factory->create({this, _input}, type, "", antlr4::Token::DEFAULT_CHANNEL, start,
                            _input->index() - 1, line, col);
  }

  std::unique_ptr<antlr4::Token> nextToken() override {
    if (getCharPositionInLine() == 0 && _input->LA(1) == '#' && _input->LA(2) == '!')
      return lex_shebang();
    if (where_ == Where::Header && getCharPositionInLine() == 0 && _input->LA(1) == '#')
      return lex_preprocessor_line();
    if (where_ == Where::Header && c_definition_start())
      return lex_c_definition();
    if (where_ == Where::Header && attach_start(_input->LA(1))) {
      auto t = lex_attach_point();
      // `let`, `macro`, `config` and `import` alone start the top-level declarations of newer
      // bpftrace.
      static const std::pair<const char *, size_t> decls[] = {
          {"let", LET}, {"macro", MACRO}, {"config", CONFIG}, {"import", IMPORT}};
      for (auto [word, type] : decls)
        if (t->getText() == word) {
          static_cast<antlr4::CommonToken &>(*t).setType(type);
          where_ = Where::Decl;
        }
      return t;
    }
    auto t = antlr4::Lexer::nextToken();
    if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL)
      return t;
    size_t type = t->getType();
    auto retype = [&](size_t to) { static_cast<antlr4::CommonToken &>(*t).setType(to); };
    switch (where_) {
    case Where::Decl:
      if (type == SEMI)
        where_ = Where::Header;
      if (type == LBRACE) {
        where_ = Where::Body;
        angle_ = false;
        braces_ = parens_ = 0;
      }
      return t;
    case Where::Header:
      if (type == DIV || type == LBRACE || type == LT) {
        where_ = type == DIV ? Where::Predicate : Where::Body;
        angle_ = type == LT;
        braces_ = parens_ = 0;
      }
      return t;
    case Where::Predicate:
      if (type == DIV) { // the closing `/` is followed (after blanks) by a body opener
        for (ssize_t i = 1;; ++i) {
          size_t c = _input->LA(i);
          if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
          if (c == '{' || c == '<') { retype(ENDPRED); where_ = Where::Header; }
          break;
        }
      }
      return t;
    case Where::Body:
      if (type == LPAREN || type == LBRACKET) ++parens_;
      if ((type == RPAREN || type == RBRACKET) && parens_ > 0) --parens_;
      if (type == LBRACE) ++braces_;
      if (type == RBRACE) {
        if (braces_ > 0) --braces_;
        else if (!angle_) where_ = Where::Header;
      }
      if (type == GT && angle_ && braces_ == 0 && parens_ == 0) {
        retype(RANGLE);
        where_ = Where::Header;
      }
      return t;
    }
    return t;
  }
}

// Imports may sit anywhere at the top level here; the AST builder says where they belong.
program : (cDefinition | configBlock | mapDecl | macroDef | importStmt)* probe
          (probe | macroDef | importStmt)* EOF ;
// A .bt file another script imports: it may hold no probe at all (only macros, say).
importedScript : (cDefinition | configBlock | mapDecl | macroDef | importStmt | probe)* EOF ;
cDefinition : C_DEFINITION | CPP_LINE ;
// import "helpers.bt"; (frontend/parse/imports.h)
importStmt : IMPORT STRING SEMI ;

// config = { max_map_keys = 100; stack_mode = raw }
configBlock : CONFIG ASSIGN LBRACE (configItem (SEMI configItem)* SEMI?)? RBRACE ;
configItem : IDENT ASSIGN (IDENT | INT | STRING | TRUE | FALSE) ;
// let @m = hash(100);
mapDecl : LET MAP ASSIGN IDENT LPAREN INT RPAREN SEMI ;
// macro add(x, $v, @m) { ...; value }: expanded where it is called (frontend/parse/macros.h)
macroDef : MACRO IDENT LPAREN (macroParam (COMMA macroParam)*)? RPAREN block ;
macroParam : IDENT | VAR | MAP ;

probe : attachPoint (COMMA attachPoint)* predicate? body ;
attachPoint : ATTACH ;
predicate : DIV expr ENDPRED ;
body
  : LBRACE stmts RBRACE
  | LT stmts RANGLE
  ;
block : LBRACE stmts RBRACE ;

// A statement without its `;` must be the last one of its block. An action, not a predicate,
// checks that: ANTLR would evaluate a predicate while predicting the end of the expression
// before it, and report the error there, without bison's "expecting }".
stmts : (ifStmt | unrollStmt | whileStmt | forStmt | blockStmt
         | (letStmt | jumpStmt | stmt) (SEMI | {if (!block_end()) throw antlr4::InputMismatchException(this);}))* ;

// bpftrace since 0.21 takes the condition without parentheses too: `if $x > 1 { ... }`.
ifStmt : IF expr block (ELSE (block | ifStmt))? ;
unrollStmt : UNROLL LPAREN expr RPAREN block ;
whileStmt : WHILE expr block ;
// for ($i : 0..10) { ... } and for ($kv : @map) { ... }, parentheses optional.
forStmt : FOR (LPAREN forHead RPAREN | forHead) block ;
forHead : var COLON (map | expr DOTDOT expr) ;
blockStmt : block ;
// let $x;  let $x = 1;  let $x: uint8 = 1;
letStmt : LET var (COLON typeName)? (ASSIGN expr)? ;
// `return $x;` (bpftrace 0.22): a probe evaluates the value and returns.
jumpStmt : BREAK | CONTINUE | RETURN expr? ;

// The builder checks the left side of an assignment (a map, a variable, or a tuple element,
// which is an error of its own).
stmt : expr (assignOp expr)? ;
assignOp
  : ASSIGN | PLUSASSIGN | MINUSASSIGN | MULASSIGN | DIVASSIGN | MODASSIGN
  | BANDASSIGN | BORASSIGN | BXORASSIGN | LEFTASSIGN | RIGHTASSIGN
  ;

// Alternatives from tightest to loosest binding (ANTLR's precedence order), as in C.
expr
  : primary                                          # primaryExpr
  | expr op=(DOT | PTR) field=(IDENT | INT_TYPE | INT | FOR | LET | BREAK | CONTINUE | RETURN)
    (LBRACKET index+=expr RBRACKET)* # fieldExpr
  | op=(MINUS | LNOT | BNOT | MUL) expr              # unaryExpr
  | LPAREN typeName RPAREN expr                       # castExpr
  | expr op=(MUL | DIV | MOD) expr                   # binaryExpr
  | expr op=(PLUS | MINUS) expr                      # binaryExpr
  | expr op=(LEFT | RIGHT) expr                      # binaryExpr
  | expr op=(LT | LE | GT | GE) expr                 # binaryExpr
  | expr op=(EQ | NE) expr                           # binaryExpr
  | expr op=BAND expr                                # binaryExpr
  | expr op=BXOR expr                                # binaryExpr
  | expr op=BOR expr                                 # binaryExpr
  | expr op=LAND expr                                # binaryExpr
  | expr op=LOR expr                                 # binaryExpr
  | <assoc=right> expr QUES expr COLON expr          # ternaryExpr
  ;

// Lists are written out (not a shared rule) so that an error inside one expects `)` or `,`.
primary
  : INT                                                        # intLit
  | (TRUE | FALSE)                                             # boolLit
  | STRING                                                     # stringLit
  | (map | var) post=(INCREMENT | DECREMENT)?                  # lvalueExpr
  | pre=(INCREMENT | DECREMENT) (map | var | IDENT)            # preIncDec
  | BAND VAR                                                   # addressOf
  // (a call is tried first: `m(typeof(x))` passes a macro its typeof(); `sizeof(uint8)` is not
  // an expression, so it is a typeArgExpr)
  | IDENT (call=LPAREN (expr (COMMA expr)*)? RPAREN | post=(INCREMENT | DECREMENT))? # identExpr
  | IDENT LPAREN typeName (COMMA fields+=IDENT (DOT fields+=IDENT)*)? RPAREN # typeArgExpr
  | (PARAM | PARAMCOUNT)                                       # paramExpr
  | LPAREN elems+=expr (COMMA elems+=expr)* RPAREN (LBRACKET index+=expr RBRACKET)* # parenExpr
  | LPAREN recordField (COMMA recordField)* COMMA? RPAREN      # recordExpr
  | LBRACE stmts RBRACE                                        # blockExpr
  | typeofType                                                 # typeofExpr
  ;

// `(a = 1, b = "x")`: a record's field (bpftrace's records, a tuple whose fields have names).
recordField : IDENT ASSIGN expr ;

// A type in a cast, sizeof or `let $x: T`: an integer type, a C struct/union/enum, typeof(...),
// or a typedef name with a `*` or `[N]` (`(name)x` alone reads as a parenthesised expression);
// then `*`s and an array's `[N]` (`[]`: as many as the cast's operand fills), as bpftrace head.
typeName
  : (INT_TYPE | (STRUCT | UNION | ENUM) IDENT | typeofType) MUL* arraySuffix?
  | IDENT (MUL+ arraySuffix? | arraySuffix)
  ;
arraySuffix : LBRACKET INT? RBRACKET ;
// typeof(uint64 *), typeof(struct Foo), typeof($x): a type, or an expression's (not evaluated).
typeofType : TYPEOF LPAREN (typeName | expr) RPAREN ;

// `@m[k][i]` and `$p[i]`: the indexes after the keys read through a pointer (*(p + i)).
map : MAP (LBRACKET keys+=expr (COMMA keys+=expr)* RBRACKET (LBRACKET index+=expr RBRACKET)*)? ;
var : VAR (LBRACKET index+=expr RBRACKET)* ;

// ---- lexer -------------------------------------------------------------------------------------
// ATTACH, ENDPRED and RANGLE are made by nextToken() above, from where the lexer is. Their rules
// only give them token types: the input is bytes, so U+FFFE never occurs.
ATTACH : '\uFFFE' 'A' ;
MACRO : '\uFFFE' 'M' ;
CONFIG : '\uFFFE' 'G' ;
IMPORT : '\uFFFE' 'I' ;
ENDPRED : '\uFFFE' 'E' ;
RANGLE : '\uFFFE' 'R' ;
C_DEFINITION : '\uFFFE' 'C' ;
CPP_LINE : '\uFFFE' 'P' ;

WS : [ \t\r\n\f\u000B]+ -> channel(HIDDEN) ;
LINE_COMMENT : '//' ~[\r\n]* -> channel(HIDDEN) ;
BLOCK_COMMENT : '/*' .*? '*/' -> channel(HIDDEN) ;

IF : 'if' ;
ELSE : 'else' ;
UNROLL : 'unroll' ;
WHILE : 'while' ;
FOR : 'for' ;
LET : 'let' ;
BREAK : 'break' ;
CONTINUE : 'continue' ;
RETURN : 'return' ;
TYPEOF : 'typeof' ;
TRUE : 'true' ;
FALSE : 'false' ;
STRUCT : 'struct' ;
UNION : 'union' ;
ENUM : 'enum' ;
INT_TYPE : 'u'? 'int' ('8' | '16' | '32' | '64') | 'bool' ;
IDENT : [a-zA-Z_] [a-zA-Z0-9_]* ;
MAP : '@' [a-zA-Z0-9_]* ;
PARAMCOUNT : '$#' ;
PARAM : '$' [0-9]+ ;
VAR : '$' [a-zA-Z_] [a-zA-Z0-9_]* ;
// Decimal with `_` separators and an optional exponent (1e3), hex, or octal (010), as bpftrace;
// a duration suffix (1ms, 5s: nanoseconds) or C's integer suffixes (10UL), as newer bpftrace.
INT : ('0' [xX] [0-9a-fA-F]+ | [0-9] [0-9_]* ([eE] [0-9]+)?) INT_SUFFIX? ;
fragment INT_SUFFIX : 'ns' | 'us' | 'ms' | 's' | 'm' | 'h' | 'd' | [uU]? ([lL] [lL]?)? ;
STRING : '"' ( '\\' ~[\r\n] | ~["\\\r\n] )* '"' ;
UNTERMINATED_STRING : '"' ( '\\' ~[\r\n] | ~["\\\r\n] )* ;

LBRACE : '{' ;
RBRACE : '}' ;
LPAREN : '(' ;
RPAREN : ')' ;
LBRACKET : '[' ;
RBRACKET : ']' ;
SEMI : ';' ;
COMMA : ',' ;
COLON : ':' ;
QUES : '?' ;
DOTDOT : '..' ;
DOT : '.' ;
PTR : '->' ;

ASSIGN : '=' ;
PLUSASSIGN : '+=' ;
MINUSASSIGN : '-=' ;
MULASSIGN : '*=' ;
DIVASSIGN : '/=' ;
MODASSIGN : '%=' ;
BANDASSIGN : '&=' ;
BORASSIGN : '|=' ;
BXORASSIGN : '^=' ;
LEFTASSIGN : '<<=' ;
RIGHTASSIGN : '>>=' ;

EQ : '==' ;
NE : '!=' ;
LE : '<=' ;
GE : '>=' ;
LEFT : '<<' ;
RIGHT : '>>' ;
LT : '<' ;
GT : '>' ;
LAND : '&&' ;
LOR : '||' ;
INCREMENT : '++' ;
DECREMENT : '--' ;
PLUS : '+' ;
MINUS : '-' ;
MUL : '*' ;
DIV : '/' ;
MOD : '%' ;
BAND : '&' ;
BOR : '|' ;
BXOR : '^' ;
LNOT : '!' ;
BNOT : '~' ;

// Anything else is reported by the parser as "invalid character", as bpftrace does.
INVALID : . ;
