#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Generates configure and Makefile.in (never committed).
set -e
cd "$(dirname "$0")"
autoreconf -fi
