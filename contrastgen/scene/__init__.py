"""One image's facts: the scene-graph index (objects by name, relations both ways, boxes),
corpus statistics over all images, grounding of noun phrases to object ids, and GQA program
references.
"""
