"""Image-text hard negatives proven false on the scene graph and balanced against text-only models
(`contrastgen captions`): true captions of an image, negatives of SugarCrepe's seven kinds and
ARO's two swaps, each with the facts that make it false (docs/captions.md)."""
