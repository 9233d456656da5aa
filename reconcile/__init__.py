"""Spark reconciliation sidecar: conversion-aware, lag-safe divergence reports."""
