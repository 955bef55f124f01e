"""Evaluating predictions: contrast-set metrics, GQA standard metrics, baselines, reports."""
