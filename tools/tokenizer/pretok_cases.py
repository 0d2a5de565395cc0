#!/usr/bin/env python3
r"""Expected pre-tokenizer splits for PreTokenizerCasesTest, from an independent regex engine.

Applies llama.cpp's regex lists for each tokenizer.ggml.pre (llama-vocab.cpp) with Python's
`regex` module, the way unicode_regex_split does: each regex splits every piece left by the
previous one, text between matches stays a piece, empty matches split nothing. `\s` is the
Unicode White_Space set (llama.cpp's tables), as in dgr's PreTokenizer.translate.

    python3 tools/tokenizer/pretok_cases.py > engine/src/test/resources/tokenizer/pretokenizer-cases.tsv

One case per line: the pre name, the text, then its words, separated by tabs; backslash,
tab, CR, LF and every non-ASCII UTF-16 unit written as Java escapes (\\, \t, \r, \n, \uXXXX).
"""
import regex

WS = "\\t\\n\\x0B\\f\\r\\x20\\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000"

def translate(r):
    out, in_class, i = [], False, 0
    while i < len(r):
        c = r[i]
        if c == "\\" and i + 1 < len(r):
            e = r[i + 1]
            if e == "s":
                out.append(WS if in_class else "[" + WS + "]")
            elif e == "S":
                out.append("[^" + WS + "]")
            else:
                out.append(c + e)
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        elif c == "$" and not in_class:
            out.append("\\Z")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
CONTR = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
LISTS = {
    "smollm": [r"\p{N}", GPT2],
    "falcon": [r"[\p{P}\$\+<=>\^~\|`]+", GPT2, r"[0-9][0-9][0-9]"],
    "deepseek-coder": ["[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+", r"\p{N}"],
    "bloom": [" ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+"],
    "viking": [" ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+", r"\p{N}"],
    "tekken": [r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "gpt-4o": [r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+" + CONTR + r"?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*" + CONTR + r"?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "seed-coder": [CONTR + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "bailingmoe": [r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"],
    # Current families (issue 27): Qwen 3.5, Jais 2, EXAONE MoE, Tiny Aya / Command A MoE, Laguna.
    "qwen35": [CONTR + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "jais-2": [CONTR + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}"],
    "exaone-moe": [CONTR + r"|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+"],
    "tiny_aya": [r"\d{1,3}(?=(?:\d{3})*\b)", r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+" + CONTR + r"?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*" + CONTR + r"?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "laguna": [r"[^\n]+|[\n]+", CONTR + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
}

TEXTS = [
    "Hello world! 123",
    "HelloWorld  foo\n\nbar's 12345.67",
    "I'M gonna parse CamelCaseXMLParser, iPhone's OK?",
    "Caf\u00e9 d\u00e9j\u00e0 vu\u2026 \u6e2c\u8a66\u3002\u4e2d\u6587\uff0c\u8a9e \ud55c\uad6d\uc5b4 \u0661\u0662\u0663",
    "  multiple   spaces\t\ttabs \n ",
    "a/b\r\nc//d -- x+y=z $5 ^_^ `code`",
    "emoji \U0001F916\U0001F642 x 3.14159",
    "\u0928\u092e\u0938\u094d\u0924\u0947\u0964 \u0645\u0631\u062d\u0628\u0627\u060c \u06d4",
]

def split(pats, text):
    pieces = [text]
    for p in pats:
        rx = regex.compile(translate(p))
        nxt = []
        for piece in pieces:
            last = 0
            for m in rx.finditer(piece):
                if m.end() == m.start():
                    continue
                if m.start() > last:
                    nxt.append(piece[last:m.start()])
                nxt.append(piece[m.start():m.end()])
                last = m.end()
            if last < len(piece):
                nxt.append(piece[last:])
        pieces = nxt
    return pieces

def esc(s):
    out = []
    for ch in s:
        units = [ch] if ord(ch) < 0x10000 else [chr(0xD800 + ((ord(ch) - 0x10000) >> 10)), chr(0xDC00 + ((ord(ch) - 0x10000) & 0x3FF))]
        for u in units:
            if u == "\\": out.append("\\\\")
            elif u == "\t": out.append("\\t")
            elif u == "\r": out.append("\\r")
            elif u == "\n": out.append("\\n")
            elif 0x20 <= ord(u) < 0x7F: out.append(u)
            else: out.append("\\u%04X" % ord(u))
    return "".join(out)

for pre, pats in LISTS.items():
    for t in TEXTS:
        print("\t".join([pre, esc(t)] + [esc(w) for w in split(pats, t)]))
