// The gpubt language: bpftrace 0.17's syntax plus `< ... >` probe bodies and gpu:/host: probes.
//
// Lexing depends on where we are, so the lexer keeps a little state (see @lexer::members):
//  * header    outside any probe body: attach points are single ATTACH tokens (paths, wildcards,
//              C++ names), `/` opens a predicate, `{` or `<` opens a body.
//  * predicate between the opening `/` and the `/` that is followed by `{` or `<` (ENDPRED,
//              as bpftrace's lexer does); any other `/` there is division.
//  * body      inside `{ }` or `< >`. In a `< >` body a `>` that is outside every (), [] and {}
//              ends the body, even when followed by `=` or `>`: write the comparisons
//              `>`, `>=`, `>>` and `>>=` inside parentheses or braces there, e.g.
//              `gpu:kprobe:k < if ($x > 1) { @big = count(); } >` or `< @b = ($x > 1); >`.
//              `<` is always less-than inside a body.
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
  enum class State { Header, Predicate, Body };
  State state_ = State::Header;
  bool angle_ = false;   // the current body is `< >`
  int braces_ = 0;       // `{` open inside the current body
  int parens_ = 0;       // `(` and `[` open inside the current body or predicate

  bool header() const { return state_ == State::Header; }
  bool angle_top() const {
    return state_ == State::Body && angle_ && braces_ == 0 && parens_ == 0;
  }
  // A predicate's closing `/` is the one followed (after blanks) by a body opener.
  bool endpred_ahead() {
    if (state_ != State::Predicate) return false;
    for (ssize_t i = 2;; ++i) {
      size_t c = _input->LA(i);
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
      return c == '{' || c == '<';
    }
  }
  void open_brace() {
    if (state_ == State::Body) { ++braces_; return; }
    state_ = State::Body; angle_ = false; braces_ = 0; parens_ = 0;
  }
  void close_brace() {
    if (state_ != State::Body) return;
    if (braces_ > 0) { --braces_; return; }
    if (!angle_) state_ = State::Header;
  }
  void open_angle() {
    if (state_ != State::Header) return;
    state_ = State::Body; angle_ = true; braces_ = 0; parens_ = 0;
  }
  void close_angle() { state_ = State::Header; }
  void open_paren() { ++parens_; }
  void close_paren() { if (parens_ > 0) --parens_; }
  void slash() {
    if (state_ == State::Header) { state_ = State::Predicate; parens_ = 0; }
  }
  void end_predicate() { state_ = State::Header; }
}

program : probe+ EOF ;

probe : attachPoint (COMMA attachPoint)* predicate? body ;
attachPoint : ATTACH ;
predicate : DIV expr ENDPRED ;
body
  : LBRACE stmts RBRACE
  | LT stmts RANGLE
  ;
block : LBRACE stmts RBRACE ;

// A statement without its `;` must be the last one of its block.
stmts : (ifStmt | stmt (SEMI | {block_end()}?))* ;

ifStmt : IF LPAREN expr RPAREN block (ELSE (block | ifStmt))? ;

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
  | expr op=(DOT | PTR) (IDENT | INT_TYPE | INT)     # fieldExpr
  | op=(MINUS | LNOT | BNOT) expr                    # unaryExpr
  | LPAREN INT_TYPE RPAREN expr                      # castExpr
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
  | STRING                                                     # stringLit
  | (map | var) post=(INCREMENT | DECREMENT)?                  # lvalueExpr
  | pre=(INCREMENT | DECREMENT) (map | var | IDENT)            # preIncDec
  | IDENT (call=LPAREN (expr (COMMA expr)*)? RPAREN | post=(INCREMENT | DECREMENT))? # identExpr
  | (PARAM | PARAMCOUNT)                                       # paramExpr
  | LPAREN expr (COMMA expr)* RPAREN                           # parenExpr
  ;

map : MAP (LBRACKET expr (COMMA expr)* RBRACKET)? ;
var : VAR ;

// ---- lexer -------------------------------------------------------------------------------------

WS : [ \t\r\n\f\u000B]+ -> channel(HIDDEN) ;
LINE_COMMENT : '//' ~[\r\n]* -> channel(HIDDEN) ;
BLOCK_COMMENT : '/*' .*? '*/' -> channel(HIDDEN) ;

// An attach point up to the next blank, `,`, `{` or `<`: provider:target:func, with `/`, `.`,
// wildcards and C++ characters allowed, and "double quoted" parts for paths with blanks.
ATTACH : {header()}? [a-zA-Z_] ( ATTACH_CHAR | ':' | '"' ~["\r\n]* '"' )* ;
fragment ATTACH_CHAR : [a-zA-Z0-9_./*?+\-~$@[\]#%=!&|^] ;

ENDPRED : {endpred_ahead()}? '/' {end_predicate();} ;
RANGLE : {angle_top()}? '>' {close_angle();} ;

IF : 'if' ;
ELSE : 'else' ;
INT_TYPE : 'u'? 'int' ('8' | '16' | '32' | '64') ;
IDENT : [a-zA-Z_] [a-zA-Z0-9_]* ;
MAP : '@' [a-zA-Z0-9_]* ;
PARAMCOUNT : '$#' ;
PARAM : '$' [0-9]+ ;
VAR : '$' [a-zA-Z_] [a-zA-Z0-9_]* ;
// Decimal with `_` separators and an optional exponent (1e3), hex, or octal (010), as bpftrace.
INT : '0' [xX] [0-9a-fA-F]+ | [0-9] [0-9_]* ([eE] [0-9]+)? ;
STRING : '"' ( '\\' ~[\r\n] | ~["\\\r\n] )* '"' ;
UNTERMINATED_STRING : '"' ( '\\' ~[\r\n] | ~["\\\r\n] )* ;

LBRACE : '{' {open_brace();} ;
RBRACE : '}' {close_brace();} ;
LPAREN : '(' {open_paren();} ;
RPAREN : ')' {close_paren();} ;
LBRACKET : '[' {open_paren();} ;
RBRACKET : ']' {close_paren();} ;
SEMI : ';' ;
COMMA : ',' ;
COLON : ':' ;
QUES : '?' ;
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
RIGHTASSIGN : {!angle_top()}? '>>=' ;

EQ : '==' ;
NE : '!=' ;
LE : '<=' ;
GE : {!angle_top()}? '>=' ;
LEFT : '<<' ;
RIGHT : {!angle_top()}? '>>' ;
LT : '<' {open_angle();} ;
GT : {!angle_top()}? '>' ;
LAND : '&&' ;
LOR : '||' ;
INCREMENT : '++' ;
DECREMENT : '--' ;
PLUS : '+' ;
MINUS : '-' ;
MUL : '*' ;
DIV : '/' {slash();} ;
MOD : '%' ;
BAND : '&' ;
BOR : '|' ;
BXOR : '^' ;
LNOT : '!' ;
BNOT : '~' ;

// Anything else is reported by the parser as "invalid character", as bpftrace does.
INVALID : . ;
