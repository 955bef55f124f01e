"""Words: the noun lexicon (built from WordNet, committed under rules/lexicon/), noun-phrase
reading, articles and agreement, and the rewriting of a question for a replacement.

Nothing here knows a scene graph; the generator and the evaluation both read words through it.
"""
