"""English words that carry no topic: the keyword index neither stores nor searches them.

Function words (articles, pronouns, prepositions, conjunctions, auxiliaries), question words
and the fragments contractions leave after tokenizing ("didn't" → "didn"). Content words
that only look common ("find", "system", "name", "move", numbers) are kept on purpose: in a
memory about code they are often the point. Words of one letter never reach this list (the
analyzer drops them by length). "may" stays: it is a month as often as a modal, and "won" is a
word, not only a contraction.
"""

from __future__ import annotations

_DETERMINERS = """
    an the this that these those some any each every either neither no another such what which whose
    whatever whichever all both few many much more most less least other others own same several enough
"""
_PRONOUNS = """
    me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself she her hers
    herself it its itself they them their theirs themselves oneself someone somebody something anyone anybody
    anything everyone everybody everything nobody nothing none whoever whomever whatsoever
"""
_PREPOSITIONS = """
    about above across after against along among amongst around as at before behind below beneath beside besides
    between beyond by down during except for from in inside into near of off on onto out outside over past per
    since than through throughout till to toward towards under underneath until unto up upon via with within without
"""
_CONJUNCTIONS = """
    and but or nor so yet because although though while whilst whereas whether if unless then else also too
    however therefore thus hence otherwise
"""
_AUXILIARIES = """
    am is are was were be been being have has had having do does did doing done can could might must shall
    should will would ought cannot
"""
_CONTRACTIONS = """
    don doesn didn isn aren wasn weren hasn haven hadn wouldn shouldn couldn mustn mightn needn shan ain
    ll ve re im ive youre youve theyre theyve weve hes shes whats thats theres
"""
_QUESTIONS = """
    what when where which who whom whose why how whenever wherever whichever
"""
_ADVERBS = """
    again already always ever even here there now just only quite rather really very still once soon
    almost perhaps maybe yes oh okay ok please etc eg ie
"""

STOP_WORDS: frozenset[str] = frozenset(
    " ".join((_DETERMINERS, _PRONOUNS, _PREPOSITIONS, _CONJUNCTIONS, _AUXILIARIES, _CONTRACTIONS, _QUESTIONS,
              _ADVERBS)).split()
)
