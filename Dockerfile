# The dashboard with the pinned requirements (docs/deploying.md).
#   docker build -t sdc-workbench .
#   docker run --rm -p 127.0.0.1:8501:8501 -e SDC_MEMORY_BUDGET=6GB --memory 8g sdc-workbench
FROM python:3.11-slim-bookworm

# Debian's Chromium: server-side figure export (PNG/SVG/PDF) through kaleido
RUN apt-get update -q \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
       chromium fonts-liberation \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt

COPY .streamlit .streamlit
COPY app.py ./
COPY views views
COPY ui ui
COPY sdc_core sdc_core
# the application directory is read-only: owned by root, no write bit for anyone, so the server's
# user can change none of its code (defence in depth, docs/deploying.md)
RUN chmod -R a-w /app

# one BLAS thread per computation: sessions share the cores (docs/deploying.md)
ENV OPENBLAS_NUM_THREADS=1

RUN useradd --create-home --uid 10001 sdc
USER sdc

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"
CMD ["python", "-m", "streamlit", "run", "app.py", "--server.address", "0.0.0.0", \
     "--server.port", "8501", "--browser.gatherUsageStats", "false"]
