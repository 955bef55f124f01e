"""A whole run: load once, shard by image, generate in a pool of workers, merge
deterministically, and count what happened (stats). The CLI and the HTTP batch job both call it.
"""
