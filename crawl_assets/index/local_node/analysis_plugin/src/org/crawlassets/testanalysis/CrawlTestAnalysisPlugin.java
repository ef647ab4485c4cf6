/*
 * Elasticsearch plugin of crawl_assets for the test suite's node and `crawl-assets es local` (our own code, Apache-2.0).
 *
 * The server distribution the tests run (org.elasticsearch.distribution.integ-test-zip) ships without the
 * analysis-common module, which every real Elasticsearch distribution has. Our index templates use six of
 * its components; this plugin registers exactly those names, each a thin factory over the Lucene class
 * that analysis-common wraps (lucene-analysis-common is in the distribution's lib/):
 *
 *   char filter  mapping                (MappingCharFilter; rules "a => b" with \\uXXXX escapes)
 *   token filter decimal_digit          (DecimalDigitFilter)
 *   token filter arabic_normalization   (ArabicNormalizationFilter)
 *   token filter persian_normalization  (PersianNormalizationFilter)
 *   token filter asciifolding           (ASCIIFoldingFilter; preserve_original, off in normalizers)
 *   analyzer     english                (EnglishAnalyzer; stopwords, stem_exclusion)
 *
 * Like analysis-common, the token filters exist both as configurable types and as pre-configured names,
 * and all of them are usable in normalizers. Shipped as source; compiled against the node's own jars.
 *
 * It builds against 8.x and 9.x alike: the factories implement the analysis interfaces, which are the same
 * on both lines, rather than extending the Abstract* base classes, whose constructors lost their Settings
 * argument in 9.0.
 */
package org.crawlassets.testanalysis;

import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.ar.ArabicNormalizationFilter;
import org.apache.lucene.analysis.charfilter.MappingCharFilter;
import org.apache.lucene.analysis.charfilter.NormalizeCharMap;
import org.apache.lucene.analysis.core.DecimalDigitFilter;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.fa.PersianNormalizationFilter;
import org.apache.lucene.analysis.miscellaneous.ASCIIFoldingFilter;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.index.analysis.Analysis;
import org.elasticsearch.index.analysis.AnalyzerProvider;
import org.elasticsearch.index.analysis.AnalyzerScope;
import org.elasticsearch.index.analysis.CharFilterFactory;
import org.elasticsearch.index.analysis.NormalizingCharFilterFactory;
import org.elasticsearch.index.analysis.NormalizingTokenFilterFactory;
import org.elasticsearch.index.analysis.PreConfiguredTokenFilter;
import org.elasticsearch.index.analysis.TokenFilterFactory;
import org.elasticsearch.indices.analysis.AnalysisModule.AnalysisProvider;
import org.elasticsearch.plugins.AnalysisPlugin;
import org.elasticsearch.plugins.Plugin;

import java.io.Reader;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

public final class CrawlTestAnalysisPlugin extends Plugin implements AnalysisPlugin {

    @Override
    public Map<String, AnalysisProvider<CharFilterFactory>> getCharFilters() {
        return Map.of("mapping", AnalysisPlugin.requiresAnalysisSettings(
            (indexSettings, env, name, settings) -> new Mapping(name, env, settings)));
    }

    @Override
    public Map<String, AnalysisProvider<TokenFilterFactory>> getTokenFilters() {
        Map<String, AnalysisProvider<TokenFilterFactory>> out = new TreeMap<>();
        out.put("decimal_digit", (i, env, name, s) -> new Simple(name, s, DecimalDigitFilter::new));
        out.put("arabic_normalization", (i, env, name, s) -> new Simple(name, s, ArabicNormalizationFilter::new));
        out.put("persian_normalization", (i, env, name, s) -> new Simple(name, s, PersianNormalizationFilter::new));
        out.put("asciifolding", (i, env, name, s) -> new AsciiFolding(name, s));
        // ---- issue 34: the stemming filters of bench/persian_search_eval.py (StemmingFilters.java) ----
        out.putAll(StemmingFilters.tokenFilters());
        // ---- end issue 34 ----
        return out;
    }

    @Override
    public List<PreConfiguredTokenFilter> getPreConfiguredTokenFilters() {
        return List.of(
            PreConfiguredTokenFilter.singleton("decimal_digit", true, DecimalDigitFilter::new),
            PreConfiguredTokenFilter.singleton("arabic_normalization", true, ArabicNormalizationFilter::new),
            PreConfiguredTokenFilter.singleton("persian_normalization", true, PersianNormalizationFilter::new),
            PreConfiguredTokenFilter.singleton("asciifolding", true, ASCIIFoldingFilter::new));
    }

    @Override
    public Map<String, AnalysisProvider<AnalyzerProvider<? extends org.apache.lucene.analysis.Analyzer>>> getAnalyzers() {
        return Map.of("english", (indexSettings, env, name, settings) -> new English(name, env, settings));
    }

    /** A token filter without options over one Lucene filter; usable in normalizers. */
    static final class Simple implements NormalizingTokenFilterFactory {
        private final String name;
        private final Function<TokenStream, TokenStream> filter;

        Simple(String name, Settings settings, Function<TokenStream, TokenStream> filter) {
            this.name = name;
            this.filter = filter;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public TokenStream create(TokenStream tokenStream) {
            return filter.apply(tokenStream);
        }
    }

    /** asciifolding: ``preserve_original`` (default false) also emits the unfolded token; never in normalizers. */
    static final class AsciiFolding implements NormalizingTokenFilterFactory {
        private final String name;
        private final boolean preserveOriginal;

        AsciiFolding(String name, Settings settings) {
            this.name = name;
            preserveOriginal = settings.getAsBoolean("preserve_original", false);
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public TokenStream create(TokenStream tokenStream) {
            return new ASCIIFoldingFilter(tokenStream, preserveOriginal);
        }

        @Override
        public TokenStream normalize(TokenStream tokenStream) {
            return new ASCIIFoldingFilter(tokenStream, false); // a normalizer yields one token
        }
    }

    /** mapping: ``mappings`` (or ``mappings_path``) rules, each "source => target". */
    static final class Mapping implements NormalizingCharFilterFactory {
        private final String name;
        private final NormalizeCharMap map;

        Mapping(String name, Environment env, Settings settings) {
            this.name = name;
            List<String> rules = Analysis.getWordList(env, settings, "mappings");
            if (rules == null) {
                throw new IllegalArgumentException("mapping requires either `mappings` or `mappings_path` to be configured");
            }
            map = MappingRules.parse(rules);
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public Reader create(Reader reader) {
            return new MappingCharFilter(map, reader);
        }
    }

    /** english: Lucene's EnglishAnalyzer with ``stopwords`` (default _english_) and ``stem_exclusion``. */
    static final class English implements AnalyzerProvider<EnglishAnalyzer> {
        private final String name;
        private final EnglishAnalyzer analyzer;

        English(String name, Environment env, Settings settings) {
            this.name = name;
            analyzer = new EnglishAnalyzer(
                Analysis.parseStopWords(env, settings, EnglishAnalyzer.getDefaultStopSet()),
                Analysis.parseStemExclusion(settings, CharArraySet.EMPTY_SET));
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public AnalyzerScope scope() {
            return AnalyzerScope.INDEX;
        }

        @Override
        public EnglishAnalyzer get() {
            return analyzer;
        }
    }
}
